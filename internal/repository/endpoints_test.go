package repository_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

func newEndpoint(at time.Time, tags ...string) *model.Endpoint {
	if tags == nil {
		tags = []string{}
	}
	return &model.Endpoint{ID: uuid.NewString(), Name: "billing", Description: "the billing receiver",
		URL: "https://billing.example.com/hooks", Secret: []byte{1, 2, 3}, Headers: map[string]string{"X-Team": "a"},
		RateLimit: &model.RateLimit{PerSecond: 2.5, Burst: 3}, MaxConcurrency: 4, TimeoutMS: 5000,
		Auth:       &model.EndpointAuth{Type: model.AuthOAuth2ClientCredentials, TokenURL: "https://id.example.com/token", ClientID: "c", Scopes: []string{"a", "b"}},
		AuthSecret: []byte{9, 9}, Circuit: &model.Circuit{Failures: 5, FailureRatio: 0.5, MinRequests: 10,
			Window: time.Minute, CoolDown: 30 * time.Second, DisableAfter: 72 * time.Hour},
		Tags: tags, Version: 1, CreatedBy: "alice", CreatedAt: at, UpdatedAt: at}
}

func mustCreateEndpoint(t *testing.T, s *repository.Store, e *model.Endpoint) {
	t.Helper()
	require.NoError(t, s.CreateEndpoint(context.Background(), e))
}

// rawExec runs a statement the store has no method for (test fixtures).
func rawExec(t *testing.T, s *repository.Store, q string, args ...any) {
	t.Helper()
	_, err := s.DB().ExecContext(context.Background(), s.DB().Rebind(q), args...)
	require.NoError(t, err)
}

// instantArg encodes an instant as the backend stores it.
func instantArg(s *repository.Store, t time.Time) any {
	if s.Backend() == repository.SQLite {
		return t.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	return t.UTC()
}

func TestEndpointRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEndpoint(t0, "team-a")
		mustCreateEndpoint(t, s, e)
		got, err := s.GetEndpoint(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, *e, got)
		if got.Health.State != model.EndpointHealthy || !got.Health.StateChangedAt.Equal(t0) {
			t.Errorf("health = %+v, want healthy since %s", got.Health, t0)
		}

		plain := &model.Endpoint{ID: uuid.NewString(), Name: "plain", URL: "https://x.example.com", Secret: []byte{1},
			Version: 1, CreatedAt: t0, UpdatedAt: t0}
		mustCreateEndpoint(t, s, plain)
		got, err = s.GetEndpoint(ctx, plain.ID)
		require.NoError(t, err)
		if got.RateLimit != nil || got.Auth != nil || got.Circuit != nil || got.Headers == nil || got.Tags == nil {
			t.Errorf("plain endpoint read back as %+v, want nil limits/auth/circuit and empty headers/tags", got)
		}

		for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
			if _, err := s.GetEndpoint(ctx, id); !errors.Is(err, model.ErrNotFound) {
				t.Errorf("GetEndpoint(%q) error = %v, want ErrNotFound", id, err)
			}
		}
	})
}

func TestUpdateEndpointIsVersioned(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEndpoint(t0, "team-a")
		mustCreateEndpoint(t, s, e)
		e.Name, e.RateLimit, e.Auth, e.AuthSecret, e.Circuit = "renamed", nil, nil, nil, nil
		e.UpdatedAt = t0.Add(time.Minute)
		require.NoError(t, s.UpdateEndpoint(ctx, e, 1, false))
		require.Equal(t, int64(2), e.Version)
		got, err := s.GetEndpoint(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, *e, got)
		if err := s.UpdateEndpoint(ctx, e, 1, false); !errors.Is(err, model.ErrStaleVersion) {
			t.Errorf("stale update error = %v, want ErrStaleVersion", err)
		}

		until := t0.Add(time.Hour)
		e.Secret, e.PreviousSecret, e.PreviousSecretExpires = []byte{7}, []byte{1, 2, 3}, &until
		require.NoError(t, s.RotateEndpointSecret(ctx, e, 2))
		got, err = s.GetEndpoint(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, []byte{7}, got.Secret)
		require.Equal(t, []byte{1, 2, 3}, got.PreviousSecret)
		require.True(t, got.PreviousSecretExpires.Equal(until))
		require.Equal(t, int64(3), got.Version)
	})
}

func TestListEndpointsScopesFiltersAndPaginates(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		a := newEndpoint(t0, "team-a")
		ab := newEndpoint(t0.Add(time.Second), "team-a", "team-b")
		b := newEndpoint(t0.Add(2*time.Second), "team-b")
		gone := newEndpoint(t0.Add(3*time.Second), "team-a")
		for _, e := range []*model.Endpoint{a, ab, b, gone} {
			mustCreateEndpoint(t, s, e)
		}
		require.NoError(t, s.DeleteEndpoint(ctx, gone.ID, 0, t0))
		require.NoError(t, s.DisableEndpoint(ctx, ab.ID, t0.Add(time.Minute), "alice", "api"))
		list := func(f model.EndpointFilter) []string {
			t.Helper()
			got, err := s.ListEndpoints(ctx, f)
			require.NoError(t, err)
			ids := []string{}
			for _, e := range got {
				ids = append(ids, e.ID)
			}
			return ids
		}
		require.Equal(t, []string{b.ID, ab.ID, a.ID}, list(model.EndpointFilter{Unrestricted: true}))
		require.Equal(t, []string{ab.ID, a.ID}, list(model.EndpointFilter{Scope: []string{"team-a"}}))
		require.Empty(t, list(model.EndpointFilter{}))
		require.Equal(t, []string{ab.ID}, list(model.EndpointFilter{Unrestricted: true, AllTags: []string{"team-a", "team-b"}}))
		require.Equal(t, []string{ab.ID}, list(model.EndpointFilter{Unrestricted: true, State: model.EndpointDisabled}))
		require.Equal(t, []string{b.ID, a.ID}, list(model.EndpointFilter{Unrestricted: true, State: model.EndpointHealthy}))
		page := list(model.EndpointFilter{Unrestricted: true, Limit: 2})
		require.Equal(t, []string{b.ID, ab.ID}, page)
		require.Equal(t, []string{a.ID}, list(model.EndpointFilter{Unrestricted: true, Limit: 2,
			After: &model.EndpointCursor{CreatedAt: ab.CreatedAt, ID: ab.ID}}))
	})
}

// endpointEvent is an event whose webhook names endpoint id.
func endpointEvent(id, catchUp string) *model.Event {
	e := newEvent("team-a")
	e.Action.Params = json.RawMessage(`{"endpoint_id":"` + id + `"}`)
	e.EndpointID, e.CatchUp = &id, catchUp
	return e
}

func TestDeleteEndpointRefusedWhileEventsNameIt(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		ep := newEndpoint(t0, "team-a")
		mustCreateEndpoint(t, s, ep)
		ev1, ev2 := endpointEvent(ep.ID, "all"), endpointEvent(ep.ID, "all")
		mustCreate(t, s, ev1)
		mustCreate(t, s, ev2)
		got, err := s.GetEvent(ctx, ev1.ID)
		require.NoError(t, err)
		require.Equal(t, ep.ID, *got.EndpointID)
		listed, err := s.ListEvents(ctx, model.EventFilter{Unrestricted: true, EndpointID: ep.ID})
		require.NoError(t, err)
		require.Len(t, listed, 2)

		var inUse *repository.EndpointInUseError
		err = s.DeleteEndpoint(ctx, ep.ID, 0, t0)
		require.ErrorAs(t, err, &inUse)
		require.Equal(t, 2, inUse.Events)
		require.ErrorIs(t, err, model.ErrConflict)

		// Pointing one event at a URL and deleting the other frees it.
		ev1.EndpointID, ev1.Action.Params = nil, json.RawMessage(`{"url":"https://example.com/h"}`)
		require.NoError(t, s.UpdateEvent(ctx, ev1, ev1.Version))
		require.NoError(t, s.DeleteEvent(ctx, ev2.ID, 0, t0))
		require.NoError(t, s.DeleteEndpoint(ctx, ep.ID, 0, t0))
		if _, err := s.GetEndpoint(ctx, ep.ID); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("GetEndpoint after delete: %v, want ErrNotFound", err)
		}
		if err := s.DeleteEndpoint(ctx, ep.ID, 0, t0); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("second delete: %v, want ErrNotFound", err)
		}
	})
}

// failDisabled inserts rows of ev at instants, failed because the
// endpoint was disabled, each already attempted once.
func failDisabled(t *testing.T, s *repository.Store, ev *model.Event, instants ...time.Time) {
	t.Helper()
	_, err := s.InsertOccurrences(context.Background(), ev.ID, instants, false, t0)
	require.NoError(t, err)
	for _, at := range instants {
		rawExec(t, s, `UPDATE occurrences SET status = 'failed', reason = ?, error_message = 'failed: its endpoint is disabled',
			attempt_count = 1 WHERE event_id = ? AND scheduled_at = ?`, model.ReasonEndpointDisabled, ev.ID, instantArg(s, at))
	}
}

func TestEnableEndpointResumesPerCatchUp(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		now := t0.Add(24 * time.Hour)
		ep := newEndpoint(t0, "team-a")
		mustCreateEndpoint(t, s, ep)
		require.NoError(t, s.DisableEndpoint(ctx, ep.ID, t0, "alice", "api"))
		h, err := health(ctx, s, ep.ID)
		require.NoError(t, err)
		require.Equal(t, model.EndpointDisabled, h.State)
		require.Equal(t, model.DisabledManual, h.DisabledReason)

		window := time.Hour
		old, in1, in2 := now.Add(-2*time.Hour), now.Add(-30*time.Minute), now.Add(-10*time.Minute)
		all, latest, none := endpointEvent(ep.ID, "all"), endpointEvent(ep.ID, "latest"), endpointEvent(ep.ID, "none")
		other := newEvent("team-a") // another event's rows are not this endpoint's
		for _, ev := range []*model.Event{all, latest, none, other} {
			mustCreate(t, s, ev)
			failDisabled(t, s, ev, old, in1, in2)
		}

		n, err := s.EnableEndpoint(ctx, ep.ID, window, now, "alice", "api")
		require.NoError(t, err)
		require.Equal(t, 3, n) // all: in1 and in2; latest: in2
		h, err = health(ctx, s, ep.ID)
		require.NoError(t, err)
		require.Equal(t, model.EndpointHealthy, h.State)
		require.Equal(t, "", h.DisabledReason)
		require.True(t, h.StateChangedAt.Equal(now))

		want := map[string]map[time.Time]bool{all.ID: {in1: true, in2: true}, latest.ID: {in2: true}}
		for _, ev := range []*model.Event{all, latest, none, other} {
			occs, err := s.ListOccurrences(ctx, model.OccurrenceFilter{EventID: ev.ID, Unrestricted: true})
			require.NoError(t, err)
			require.Len(t, occs, 3)
			for _, o := range occs {
				resumed := want[ev.ID][o.ScheduledAt]
				switch {
				case resumed && (o.Status != model.OccurrencePending || !o.NextAttemptAt.Equal(now) ||
					o.Reason != nil || o.ErrorMessage != nil || o.AttemptCount != 1):
					t.Errorf("event %s catch_up %s row %s: got %s next %s reason %v error %v attempts %d, want pending at now, cleared, attempts 1",
						ev.ID, ev.CatchUp, o.ScheduledAt, o.Status, o.NextAttemptAt, o.Reason, o.ErrorMessage, o.AttemptCount)
				case !resumed && (o.Status != model.OccurrenceFailed || o.Reason == nil || *o.Reason != model.ReasonEndpointDisabled):
					t.Errorf("event %s catch_up %s row %s: got %s, want still failed endpoint_disabled", ev.ID, ev.CatchUp,
						o.ScheduledAt, o.Status)
				}
			}
		}
		if _, err := s.EnableEndpoint(ctx, uuid.NewString(), window, now, "alice", "api"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("enable unknown: %v, want ErrNotFound", err)
		}
	})
}

func TestEndpointStats(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		ep := newEndpoint(t0, "team-a")
		mustCreateEndpoint(t, s, ep)
		ev := endpointEvent(ep.ID, "all")
		mustCreate(t, s, ev)
		_, err := s.InsertOccurrences(ctx, ev.ID, []time.Time{t0}, false, t0)
		require.NoError(t, err)
		occs, err := s.ListOccurrences(ctx, model.OccurrenceFilter{EventID: ev.ID, Unrestricted: true})
		require.NoError(t, err)

		empty, err := s.EndpointStats(ctx, ep.ID, t0, 1000)
		require.NoError(t, err)
		require.Equal(t, 0, empty.Attempts)
		require.Nil(t, empty.SuccessRatio)
		require.Nil(t, empty.LatencyP50MS)

		// Ten attempts of 10..100 ms, the first two failed; one before since
		// and one to another endpoint are left out.
		insert := func(at time.Time, ms int64, outcome string, endpoint any) {
			// An attempt carries its occurrence's instant (the partition
			// key on PostgreSQL).
			rawExec(t, s, `INSERT INTO attempts (id, occurrence_id, event_id, attempt, started_at, duration_ms, outcome,
				endpoint_id, scheduled_at) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)`, uuid.NewString(), occs[0].ID, ev.ID,
				instantArg(s, at), ms, outcome, endpoint, instantArg(s, occs[0].ScheduledAt))
		}
		for i := int64(1); i <= 10; i++ {
			outcome := "completed"
			switch i {
			case 1, 2:
				outcome = "retrying"
			case 3:
				outcome = "awaiting_ack"
			}
			insert(t0.Add(time.Duration(i)*time.Second), 10*i, outcome, ep.ID)
		}
		insert(t0.Add(-time.Second), 5000, "failed", ep.ID)
		insert(t0.Add(time.Second), 7000, "failed", uuid.NewString())

		st, err := s.EndpointStats(ctx, ep.ID, t0, 1000)
		require.NoError(t, err)
		require.Equal(t, 10, st.Attempts)
		require.Equal(t, 8, st.Succeeded)
		require.InDelta(t, 0.8, *st.SuccessRatio, 1e-9)
		require.Equal(t, int64(50), *st.LatencyP50MS)
		require.Equal(t, int64(90), *st.LatencyP90MS)
		require.Equal(t, int64(100), *st.LatencyP99MS)

		// The newest five only: 60..100 ms, all succeeded.
		st, err = s.EndpointStats(ctx, ep.ID, t0, 5)
		require.NoError(t, err)
		require.Equal(t, 5, st.Attempts)
		require.Equal(t, 5, st.Succeeded)
		require.Equal(t, int64(80), *st.LatencyP50MS)
	})
}

// health reads an endpoint's shared health as the API shows it.
func health(ctx context.Context, s *repository.Store, id string) (model.EndpointHealth, error) {
	ep, err := s.GetEndpoint(ctx, id)
	return ep.Health, err
}
