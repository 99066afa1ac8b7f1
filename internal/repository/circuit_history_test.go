package repository_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// openBreaker is the breaker's opening as UpdateEndpointHealth sees it: the
// state moves to open with the last error kept.
func openBreaker(h model.EndpointHealth, now time.Time, errText string) (model.EndpointHealth, bool) {
	if h.State == model.EndpointOpen {
		return h, false
	}
	h.ConsecutiveFailures += 5
	h.LastError = errText
	h.State, h.StateChangedAt, h.OpenedAt = model.EndpointOpen, now, &now
	return h, true
}

func TestCircuitHistoryRecordsEachTransitionOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		ep := newEndpoint(t0)
		mustCreateEndpoint(t, s, ep)
		at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

		// Several instances race to open the same circuit: one transition,
		// one row.
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, errs[i] = s.UpdateEndpointHealth(ctx, ep.ID, at(1), func(h model.EndpointHealth) (model.EndpointHealth, bool) {
					return openBreaker(h, at(1), "HTTP 503")
				})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		// A counter change is no transition.
		_, _, err := s.UpdateEndpointHealth(ctx, ep.ID, at(2), func(h model.EndpointHealth) (model.EndpointHealth, bool) {
			h.WindowTotal++
			return h, true
		})
		require.NoError(t, err)
		// A trial starts, fails: reopened.
		_, _, err = s.UpdateEndpointHealth(ctx, ep.ID, at(3), func(h model.EndpointHealth) (model.EndpointHealth, bool) {
			h.TrialToken = "t1"
			return h, true
		})
		require.NoError(t, err)
		_, _, err = s.UpdateEndpointHealth(ctx, ep.ID, at(4), func(h model.EndpointHealth) (model.EndpointHealth, bool) {
			h.TrialToken, h.ConsecutiveFailures, h.LastError = "", h.ConsecutiveFailures+1, "HTTP 500"
			return h, true
		})
		require.NoError(t, err)
		// A trial given back (not sent) is no transition.
		for _, token := range []string{"t2", ""} {
			_, _, err = s.UpdateEndpointHealth(ctx, ep.ID, at(5), func(h model.EndpointHealth) (model.EndpointHealth, bool) {
				h.TrialToken = token
				return h, true
			})
			require.NoError(t, err)
		}
		// The next trial succeeds: closed.
		_, _, err = s.UpdateEndpointHealth(ctx, ep.ID, at(6), func(h model.EndpointHealth) (model.EndpointHealth, bool) {
			h.State, h.ConsecutiveFailures, h.OpenedAt = model.EndpointHealthy, 0, nil
			return h, true
		})
		require.NoError(t, err)
		// A user disables, disables again (no change) and enables.
		require.NoError(t, s.DisableEndpoint(ctx, ep.ID, at(7), "alice", "console"))
		require.NoError(t, s.DisableEndpoint(ctx, ep.ID, at(8), "alice", "console"))
		_, err = s.EnableEndpoint(ctx, ep.ID, time.Hour, at(9), "bob", "cli")
		require.NoError(t, err)

		got, err := s.ListCircuitHistory(ctx, ep.ID, nil, 50)
		require.NoError(t, err)
		type row struct {
			change   string
			from, to model.EndpointState
			reason   string
			failures int
			subject  string
			channel  string
			at       time.Time
		}
		var rows []row
		for _, e := range got {
			require.Equal(t, ep.ID, e.EndpointID)
			rows = append(rows, row{e.Change, e.From, e.To, e.Reason, e.ConsecutiveFailures, e.Subject, e.Channel, e.At})
		}
		require.Equal(t, []row{
			{model.CircuitEnabled, model.EndpointDisabled, model.EndpointHealthy, "", 0, "bob", "cli", at(9)},
			{model.CircuitDisabled, model.EndpointHealthy, model.EndpointDisabled, model.DisabledManual, 0, "alice", "console", at(7)},
			{model.CircuitClosed, model.EndpointOpen, model.EndpointHealthy, "", 0, "", "", at(6)},
			{model.CircuitReopened, model.EndpointOpen, model.EndpointOpen, "HTTP 500", 6, "", "", at(4)},
			{model.CircuitOpened, model.EndpointHealthy, model.EndpointOpen, "HTTP 503", 5, "", "", at(1)},
		}, rows)

		// Unknown and malformed endpoints have no history.
		for _, id := range []string{uuid.NewString(), "nope"} {
			none, err := s.ListCircuitHistory(ctx, id, nil, 10)
			require.NoError(t, err)
			require.Empty(t, none)
		}
		if err := s.DisableEndpoint(ctx, uuid.NewString(), at(10), "alice", "api"); err == nil {
			t.Error("disabling an unknown endpoint succeeded")
		}
	})
}

func TestCircuitHistoryPagesNewestFirstAndKeepsTheNewest(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		ep := newEndpoint(t0)
		mustCreateEndpoint(t, s, ep)
		// Open and close in turn, two rows per round, some in the same
		// instant, until more than the kept number were written.
		n := model.CircuitHistoryKeep + 10
		for i := 0; i < n; i++ {
			now := t0.Add(time.Duration(i/4) * time.Second)
			_, _, err := s.UpdateEndpointHealth(ctx, ep.ID, now, func(h model.EndpointHealth) (model.EndpointHealth, bool) {
				if h.State == model.EndpointOpen {
					h.State = model.EndpointHealthy
					return h, true
				}
				return openBreaker(h, now, fmt.Sprintf("error %d", i))
			})
			require.NoError(t, err)
		}
		var all []model.CircuitEntry
		var cursor *model.PageCursor
		for page := 0; ; page++ {
			require.Less(t, page, 100, "paging never ended")
			got, err := s.ListCircuitHistory(ctx, ep.ID, cursor, 7)
			require.NoError(t, err)
			all = append(all, got...)
			if len(got) < 7 {
				break
			}
			last := got[len(got)-1]
			cursor = &model.PageCursor{At: last.At, ID: last.ID}
		}
		require.Len(t, all, model.CircuitHistoryKeep)
		seen := map[string]bool{}
		for i, e := range all {
			require.False(t, seen[e.ID], "entry %s listed twice", e.ID)
			seen[e.ID] = true
			if i > 0 {
				prev := all[i-1]
				require.True(t, e.At.Before(prev.At) || (e.At.Equal(prev.At) && e.ID < prev.ID),
					"entry %d (%s %s) not older than entry %d (%s %s)", i, e.At, e.ID, i-1, prev.At, prev.ID)
			}
		}
		// The newest is the last written: round n-1 (odd n-1 closes).
		require.Equal(t, t0.Add(time.Duration((n-1)/4)*time.Second), all[0].At)
	})
}

func TestNoticesRecordListAndGoWithTheirChannel(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		ch := model.NotificationChannel{ID: uuid.NewString(), Name: "ops", Type: model.ChannelWebhook,
			URL: "https://ops.example.com/n", To: []string{}, Kinds: []string{}, CreatedAt: t0, UpdatedAt: t0}
		require.NoError(t, s.CreateNotificationChannel(ctx, &ch))
		other := uuid.NewString()
		n := model.NoticesKeep + 5
		for i := 0; i < n; i++ {
			outcome, answer := model.NoticeDelivered, "HTTP 204"
			if i%2 == 1 {
				outcome, answer = model.NoticeFailed, "post notice: HTTP 500"
			}
			require.NoError(t, s.RecordNotice(ctx, model.SentNotice{ChannelID: ch.ID,
				At: t0.Add(time.Duration(i/3) * time.Second), Kind: "circuit_opened",
				Summary: fmt.Sprintf("notice %d", i), Outcome: outcome, Answer: answer, Test: i == n-1}))
		}
		require.NoError(t, s.RecordNotice(ctx, model.SentNotice{ChannelID: other, At: t0, Kind: "test",
			Outcome: model.NoticeDelivered}))
		// A configured channel is not stored: nothing to record.
		require.NoError(t, s.RecordNotice(ctx, model.SentNotice{ChannelID: "config:ops", At: t0, Kind: "test",
			Outcome: model.NoticeDelivered}))

		first, err := s.ListNotices(ctx, ch.ID, nil, 3)
		require.NoError(t, err)
		require.Len(t, first, 3)
		require.Equal(t, fmt.Sprintf("notice %d", n-1), first[0].Summary)
		require.True(t, first[0].Test)
		require.Equal(t, model.NoticeDelivered, first[0].Outcome)
		require.Equal(t, "HTTP 204", first[0].Answer)
		require.False(t, first[1].Test)
		require.Equal(t, model.NoticeFailed, first[1].Outcome)
		last := first[2]
		next, err := s.ListNotices(ctx, ch.ID, &model.PageCursor{At: last.At, ID: last.ID}, 2)
		require.NoError(t, err)
		require.Equal(t, []string{fmt.Sprintf("notice %d", n-4), fmt.Sprintf("notice %d", n-5)},
			[]string{next[0].Summary, next[1].Summary})

		all, err := s.ListNotices(ctx, ch.ID, nil, 1000)
		require.NoError(t, err)
		require.Len(t, all, model.NoticesKeep)
		require.Equal(t, "notice 5", all[len(all)-1].Summary) // the 5 oldest were trimmed

		require.NoError(t, s.DeleteNotificationChannel(ctx, ch.ID))
		gone, err := s.ListNotices(ctx, ch.ID, nil, 10)
		require.NoError(t, err)
		require.Empty(t, gone)
		kept, err := s.ListNotices(ctx, other, nil, 10)
		require.NoError(t, err)
		require.Len(t, kept, 1)
	})
}
