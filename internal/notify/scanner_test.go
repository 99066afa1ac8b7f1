package notify_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/notify"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

func eachBackend(t *testing.T, fn func(t *testing.T, s *repository.Store)) {
	t.Helper()
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.Open(t))
		})
	}
}

// createEvent stores a one-time event, or a series with rrule.
func createEvent(t *testing.T, s *repository.Store, name string, rrule ...string) *model.Event {
	t.Helper()
	e := &model.Event{ID: uuid.NewString(), Name: name, StartTime: t0, Timezone: "UTC",
		Action:  model.Action{Type: "webhook", Params: json.RawMessage(`{"url":"https://example.com/h"}`)},
		CatchUp: "all", Status: model.EventActive, CreatedVia: "api", Version: 1, CreatedAt: t0, UpdatedAt: t0}
	if len(rrule) > 0 {
		e.RRule = &rrule[0]
	}
	require.NoError(t, s.CreateEvent(context.Background(), e))
	return e
}

// failOccurrence plans one occurrence of ev and records it failed at at,
// as the dispatcher does after the last retry.
func failOccurrence(t *testing.T, s *repository.Store, ev *model.Event, at time.Time, reason, msg string) string {
	t.Helper()
	ctx := context.Background()
	_, err := s.InsertOccurrences(ctx, ev.ID, []time.Time{at.Add(-time.Second)}, false, at.Add(-time.Second))
	require.NoError(t, err)
	got, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: at, Limit: 10, Owner: "test", Token: "tok",
		LeaseUntil: at.Add(time.Minute)})
	require.NoError(t, err)
	require.Len(t, got, 1)
	res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: got[0].ID, LeaseToken: "tok",
		Status: model.OccurrenceFailed, ErrorMessage: &msg, Reason: reason, Now: at, EventID: ev.ID}})
	require.NoError(t, err)
	require.NoError(t, res[0])
	return got[0].ID
}

func TestScannerReportsFailuresAndEndedSeriesOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		r := newReceiver(t, testSecret)
		clk := newClock()
		n, _ := webhookNotifier(t, r, clk, notify.Options{DigestInterval: time.Minute})
		locker := coordination.NewLocal(clk.Now)
		scanner := notify.NewScanner(s, n, locker, clk.Now, notify.ScannerConfig{Owner: "a", Interval: time.Minute}, nil)

		// The first scan of a deployment starts now: history is not news.
		old := createEvent(t, s, "old")
		failOccurrence(t, s, old, t0.Add(-time.Hour), "", "old failure")
		got, err := scanner.RunOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, got)

		billing := createEvent(t, s, "billing")
		occID := failOccurrence(t, s, billing, t0.Add(10*time.Second), "", "HTTP 500: boom")
		disabled := createEvent(t, s, "disabled")
		failOccurrence(t, s, disabled, t0.Add(11*time.Second), "endpoint_disabled", "endpoint disabled")
		report := createEvent(t, s, "report", "FREQ=DAILY;COUNT=3")
		res, err := s.SetExpansion(ctx, repository.ExpansionUpdate{EventID: report.ID, Version: 1,
			ExpandedUntil: model.SeriesEnd, Now: t0.Add(20 * time.Second)})
		require.NoError(t, err)
		require.True(t, res.Inactive, "the series ended")
		// A one-time event that is over is not a series that ended.
		once := createEvent(t, s, "reminder")
		res, err = s.SetExpansion(ctx, repository.ExpansionUpdate{EventID: once.ID, Version: 1,
			ExpandedUntil: model.SeriesEnd, Now: t0.Add(21 * time.Second)})
		require.NoError(t, err)
		require.True(t, res.Inactive)

		clk.Advance(time.Minute)
		other := notify.NewScanner(s, n, locker, clk.Now, notify.ScannerConfig{Owner: "b", Interval: time.Minute}, nil)
		got, err = other.RunOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, got, "only the leader scans")

		got, err = scanner.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, got, "the failure and the ended series; not the endpoint_disabled row")
		n.RunOnce(ctx)
		clk.Advance(time.Minute)
		n.RunOnce(ctx)

		rec := r.received()
		require.Len(t, rec, 2)
		byType := map[string]received{}
		for _, x := range rec {
			byType[x.Payload.Type] = x
		}
		var ended struct {
			EventID string `json:"event_id"`
			Title   string `json:"title"`
		}
		require.NoError(t, json.Unmarshal(byType["series_ended"].Payload.Data, &ended))
		require.Equal(t, report.ID, ended.EventID)
		require.Equal(t, "Event report: series ended", ended.Title)
		var digest struct {
			Count    int `json:"count"`
			Failures []struct {
				EventID      string `json:"event_id"`
				EventName    string `json:"event_name"`
				OccurrenceID string `json:"occurrence_id"`
				Error        string `json:"error"`
			} `json:"failures"`
		}
		require.NoError(t, json.Unmarshal(byType["delivery_failed"].Payload.Data, &digest))
		require.Equal(t, 1, digest.Count)
		require.Equal(t, billing.ID, digest.Failures[0].EventID)
		require.Equal(t, "billing", digest.Failures[0].EventName)
		require.Equal(t, occID, digest.Failures[0].OccurrenceID)
		require.Equal(t, "HTTP 500: boom", digest.Failures[0].Error)

		// Again, and after a restart (a new scanner, the stored cursor): no
		// repeats.
		got, err = scanner.RunOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, got)
		restarted := notify.NewScanner(s, n, nil, clk.Now, notify.ScannerConfig{Owner: "a"}, nil)
		got, err = restarted.RunOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, got)

		// A failure after that is reported by the next scan.
		failOccurrence(t, s, billing, clk.Now().Add(time.Second), "", "timeout")
		clk.Advance(time.Minute)
		got, err = restarted.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, got)
	})
}

// readCounter counts the scanner's reads of each source.
type readCounter struct {
	*repository.Store
	failed, ended int
}

func (c *readCounter) FailedOccurrencesAfter(ctx context.Context, after model.ScanCursor, upto time.Time, limit int) ([]model.FailedOccurrence, error) {
	c.failed++
	return c.Store.FailedOccurrencesAfter(ctx, after, upto, limit)
}

func (c *readCounter) EndedEventsAfter(ctx context.Context, after model.ScanCursor, upto time.Time, limit int) ([]model.EndedEvent, error) {
	c.ended++
	return c.Store.EndedEventsAfter(ctx, after, upto, limit)
}

// A kind no channel wants is not read, and its cursor moves on: a channel
// that wants it later is not sent the backlog. A source read once is not
// read again from the same place at the next scan.
func TestScannerReadsOnlyWhatAChannelWantsAndOnlyOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		r := newReceiver(t, testSecret)
		clk := newClock()
		store := &readCounter{Store: s}
		onlyEnded, _ := webhookNotifier(t, r, clk, notify.Options{DigestInterval: time.Minute}, notify.SeriesEnded)
		scanner := notify.NewScanner(store, onlyEnded, nil, clk.Now, notify.ScannerConfig{Interval: time.Minute}, nil)
		_, err := scanner.RunOnce(ctx) // the first scan starts the cursors now
		require.NoError(t, err)

		failOccurrence(t, s, createEvent(t, s, "billing"), t0.Add(10*time.Second), "", "HTTP 500: boom")
		clk.Advance(time.Minute)
		got, err := scanner.RunOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, got)
		require.Zero(t, store.failed, "no channel wants delivery_failed: failures are not read")
		require.Equal(t, 1, store.ended)

		all, _ := webhookNotifier(t, r, clk, notify.Options{DigestInterval: time.Minute})
		later := notify.NewScanner(store, all, nil, clk.Now, notify.ScannerConfig{Interval: time.Minute}, nil)
		clk.Advance(time.Minute)
		got, err = later.RunOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, got, "the failure from before any channel wanted it is not news")
		require.Equal(t, 1, store.failed)
	})
}

// runOccurrence plans one occurrence of a callback event and records its
// delivery accepted at at: the run is under way until deadline.
func runOccurrence(t *testing.T, s *repository.Store, ev *model.Event, at, deadline time.Time) string {
	t.Helper()
	ctx := context.Background()
	_, err := s.InsertOccurrences(ctx, ev.ID, []time.Time{at.Add(-time.Second)}, false, at.Add(-time.Second))
	require.NoError(t, err)
	got, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: at, Limit: 10, Owner: "test", Token: "tok",
		LeaseUntil: at.Add(time.Minute)})
	require.NoError(t, err)
	require.Len(t, got, 1)
	code := 202
	res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: got[0].ID, LeaseToken: "tok",
		Status: model.OccurrenceRunning, AckDeadline: &deadline, Callback: true, StatusCode: &code, Now: at,
		EventID: ev.ID, Ran: true}})
	require.NoError(t, err)
	require.NoError(t, res[0])
	return got[0].ID
}

// A run that timed out and one its receiver reported failed are their own
// notices, sent at once to a channel that asks for them, and not in the
// delivery_failed digest: their deliveries had succeeded.
func TestScannerReportsRunsThatFailedOrTimedOut(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		r := newReceiver(t, testSecret)
		clk := newClock()
		n, _ := webhookNotifier(t, r, clk, notify.Options{DigestInterval: time.Minute},
			notify.RunFailed, notify.RunTimedOut)
		scanner := notify.NewScanner(s, n, nil, clk.Now, notify.ScannerConfig{Interval: time.Minute}, nil)
		_, err := scanner.RunOnce(ctx) // the first scan starts now
		require.NoError(t, err)

		export := createEvent(t, s, "nightly export")
		timedOut := runOccurrence(t, s, export, t0.Add(10*time.Second), t0.Add(20*time.Second))
		ended, err := s.TimeOutRuns(ctx, t0.Add(30*time.Second), 10)
		require.NoError(t, err)
		require.Equal(t, 1, ended)
		invoices := createEvent(t, s, "invoice run")
		failed := runOccurrence(t, s, invoices, t0.Add(31*time.Second), t0.Add(time.Hour))
		_, err = s.CompleteRun(ctx, failed, model.RunFailed, nil, t0.Add(32*time.Second))
		require.NoError(t, err)
		sync := createEvent(t, s, "sync")
		failOccurrence(t, s, sync, t0.Add(33*time.Second), "", "HTTP 500: boom")

		clk.Advance(time.Minute)
		got, err := scanner.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, got, "read: two runs and a delivery failure")
		n.RunOnce(ctx)
		clk.Advance(time.Minute)
		n.RunOnce(ctx)

		rec := r.received()
		require.Len(t, rec, 2, "the channel asked for runs only: no delivery_failed digest")
		byType := map[string]string{}
		for _, x := range rec {
			var d struct {
				OccurrenceID string `json:"occurrence_id"`
				Title        string `json:"title"`
			}
			require.NoError(t, json.Unmarshal(x.Payload.Data, &d))
			byType[x.Payload.Type] = d.OccurrenceID + " " + d.Title
		}
		require.Equal(t, timedOut+" Event nightly export: run timed out", byType["run_timed_out"])
		require.Equal(t, failed+" Event invoice run: run failed", byType["run_failed"])
	})
}
