package repository_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// runOutcome is the dispatcher's record of a callback delivery the
// receiver accepted (claimed under token "tok").
func runOutcome(e *model.Event, o model.Occurrence, now, deadline time.Time) repository.OutcomeRecord {
	code := 202
	return repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok", Status: model.OccurrenceRunning,
		AckDeadline: &deadline, Callback: true, StatusCode: &code, Now: now, EventID: e.ID, Ran: true,
		LastStatus: model.RunStatus(string(model.OccurrenceRunning), code, ""),
		Attempt: &model.Attempt{OccurrenceID: o.ID, EventID: e.ID, Attempt: 1, StartedAt: now,
			Outcome: string(model.OccurrenceRunning), StatusCode: &code}}
}

func claimedRun(t *testing.T, s *repository.Store) (*model.Event, model.Occurrence) {
	t.Helper()
	e := newEvent()
	e.Completion = model.CompletionCallback
	mustCreate(t, s, e)
	_, err := s.InsertOccurrences(context.Background(), e.ID, []time.Time{t0}, false, t0)
	require.NoError(t, err)
	got := claim(t, s, t0, 1)
	require.Len(t, got, 1)
	return e, got[0]
}

// finishedCounts are the statistics' finished occurrences by status,
// from the rollups and from the rows (which must agree).
func finishedCounts(t *testing.T, s *repository.Store) map[model.OccurrenceStatus]int {
	t.Helper()
	f := model.StatsFilter{Since: t0.Add(-time.Hour), Until: t0.Add(time.Hour), Now: t0, Unrestricted: true}
	rolled, err := s.Stats(context.Background(), f)
	require.NoError(t, err)
	f.Raw = true
	raw, err := s.Stats(context.Background(), f)
	require.NoError(t, err)
	out := map[model.OccurrenceStatus]int{}
	for st, n := range raw.Total.ByStatus {
		if st.Terminal() {
			out[st] = n
			require.Equal(t, n, rolled.Total.ByStatus[st], "the rollups count %s as the rows do", st)
		}
	}
	return out
}

// A run accepted, then completed: running with its deadline, then
// completed with the report; the statistics count it once; the event's
// last_status is the run's end even when the delivery's bookkeeping lands
// after the completion; the same report again changes nothing.
func TestRunCompletesByCallback(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e, o := claimedRun(t, s)
		deadline := t0.Add(time.Hour)
		rec := runOutcome(e, o, t0.Add(time.Second), deadline)
		record(t, s, rec)
		got, err := s.GetOccurrence(ctx, o.ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceRunning, got.Status)
		require.Equal(t, deadline, got.LeaseExpiresAt.UTC(), "the run's deadline")
		require.Nil(t, got.CompletedAt)

		n, err := s.RescueExpired(ctx, t0.Add(48*time.Hour), 10)
		require.NoError(t, err)
		require.Zero(t, n, "a run is never sent again by the lease rescue")

		output := `{"rows":42}`
		got, err = s.CompleteRun(ctx, o.ID, model.RunSucceeded, &output, t0.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceCompleted, got.Status)
		require.Equal(t, t0.Add(time.Minute), got.CompletedAt.UTC())
		require.Nil(t, got.LeaseExpiresAt)
		require.Equal(t, output, *got.RunOutput)
		noteRuns(t, s, rec) // the delivery's bookkeeping, late
		ev, err := s.GetEvent(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, "completed", ev.LastStatus, "the run's end wins over its late bookkeeping")

		again, err := s.CompleteRun(ctx, o.ID, model.RunSucceeded, &output, t0.Add(2*time.Minute))
		require.NoError(t, err, "the same report again")
		require.Equal(t, got.CompletedAt.UTC(), again.CompletedAt.UTC())
		_, err = s.CompleteRun(ctx, o.ID, model.RunFailed, nil, t0.Add(2*time.Minute))
		require.ErrorIs(t, err, repository.ErrRunEnded)

		require.Equal(t, map[model.OccurrenceStatus]int{model.OccurrenceCompleted: 1}, finishedCounts(t, s), "counted once")
	})
}

// A report made while the delivery is in flight decides the row when its
// 2xx is recorded; a heartbeat then is noted.
func TestRunReportedBeforeItsDeliveryIsRecorded(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e, o := claimedRun(t, s)
		_, err := s.Heartbeat(ctx, o.ID, time.Hour, t0.Add(time.Millisecond))
		require.NoError(t, err)
		early, err := s.CompleteRun(ctx, o.ID, model.RunFailed, nil, t0.Add(2*time.Millisecond))
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceDispatching, early.Status, "still in flight: the report waits")
		record(t, s, runOutcome(e, o, t0.Add(time.Second), t0.Add(time.Hour)))
		got, err := s.GetOccurrence(ctx, o.ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceFailed, got.Status)
		require.Equal(t, model.RunFailedMessage, *got.ErrorMessage)
		require.Equal(t, t0.Add(2*time.Millisecond), got.CompletedAt.UTC(), "ended when reported")
		require.NotNil(t, got.HeartbeatAt)
		require.Equal(t, map[model.OccurrenceStatus]int{model.OccurrenceFailed: 1}, finishedCounts(t, s))
	})
}

// A run past its deadline times out (a failure, counted); heartbeats move
// the deadline; a report after the timeout is kept as late and refused.
func TestRunTimesOutUnlessItHeartbeats(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e, o := claimedRun(t, s)
		record(t, s, runOutcome(e, o, t0.Add(time.Second), t0.Add(time.Minute)))

		beat, err := s.Heartbeat(ctx, o.ID, time.Minute, t0.Add(50*time.Second))
		require.NoError(t, err)
		require.Equal(t, t0.Add(110*time.Second), beat.LeaseExpiresAt.UTC())
		n, err := s.TimeOutRuns(ctx, t0.Add(100*time.Second), 10)
		require.NoError(t, err)
		require.Zero(t, n, "the heartbeat moved the deadline")

		n, err = s.TimeOutRuns(ctx, t0.Add(111*time.Second), 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		got, err := s.GetOccurrence(ctx, o.ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceTimedOut, got.Status)
		require.Equal(t, model.RunTimedOutMessage, *got.ErrorMessage)
		ev, err := s.GetEvent(ctx, e.ID)
		require.NoError(t, err)
		require.Contains(t, ev.LastStatus, "timed_out")

		failed, err := s.FailedOccurrencesAfter(ctx, model.ScanCursor{}, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Len(t, failed, 1, "a timed-out run is in the failure notices")
		require.Equal(t, o.ID, failed[0].ID)

		late, err := s.CompleteRun(ctx, o.ID, model.RunSucceeded, nil, t0.Add(time.Hour))
		require.ErrorIs(t, err, repository.ErrRunEnded)
		require.Equal(t, model.OccurrenceTimedOut, late.Status, "not resurrected")
		require.Equal(t, model.RunSucceeded, *late.RunStatus, "kept as late")
		_, err = s.Heartbeat(ctx, o.ID, time.Minute, t0.Add(time.Hour))
		require.ErrorIs(t, err, repository.ErrRunEnded)

		require.Equal(t, map[model.OccurrenceStatus]int{model.OccurrenceTimedOut: 1}, finishedCounts(t, s))

		replayed, err := s.RetryOccurrence(ctx, o.ID, t0.Add(2*time.Hour))
		require.NoError(t, err, "an operator replays a timed-out run")
		require.Equal(t, model.OccurrencePending, replayed.Status)
		require.Nil(t, replayed.RunStatus, "the replay starts a new run")
	})
}
