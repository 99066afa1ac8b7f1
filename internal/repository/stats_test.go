package repository_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// seedStats builds a dataset whose figures are known exactly; it returns
// the "now" of the stats window.
//
// webhook (tag a): 20 occurrences fired at t0+1h, first attempts lasting
// 10, 20 … 200 ms and late 0, 5 … 95 ms; 19 completed, one retried once
// (a 1000 ms second attempt) and failed. One older occurrence outside the
// window. apicall (tag b): two completed (3 ms late 1, 7 ms late 2), one
// retrying, one pending and due, one pending in the future.
func seedStats(t *testing.T, s *repository.Store) time.Time {
	t.Helper()
	ctx := context.Background()
	now := t0.Add(2 * time.Hour)
	web := newEvent("a")
	api := newEvent("b")
	api.Action.Type = "apicall"
	mustCreate(t, s, web)
	mustCreate(t, s, api)

	settle(t, s, web, t0.Add(-2*day), t0.Add(-2*day), model.OccurrenceCompleted, 1) // outside the window

	var instants []time.Time
	for i := range 20 {
		instants = append(instants, t0.Add(time.Duration(i)*time.Second))
	}
	_, err := s.InsertOccurrences(ctx, web.ID, instants, false, t0)
	require.NoError(t, err)
	fired := t0.Add(time.Hour)
	claimed := claim(t, s, fired, 20)
	require.Len(t, claimed, 20)
	retryAt := t0.Add(90 * time.Minute)
	var recs []repository.OutcomeRecord
	for i, o := range claimed {
		rec := repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok", Status: model.OccurrenceCompleted,
			Now: fired, Attempt: &model.Attempt{OccurrenceID: o.ID, EventID: web.ID, Attempt: 1, StartedAt: fired,
				DurationMS: int64(10 * (i + 1)), LatenessMS: int64(5 * i), Outcome: "completed"}}
		if i == 7 {
			rec.Status, rec.NextAttemptAt, rec.Attempt.Outcome = model.OccurrenceRetrying, &retryAt, "retrying"
		}
		recs = append(recs, rec)
	}
	recordAll(t, s, recs)
	again := claim(t, s, retryAt, 1)
	require.Len(t, again, 1)
	recordAll(t, s, []repository.OutcomeRecord{{OccurrenceID: again[0].ID, LeaseToken: "tok",
		Status: model.OccurrenceFailed, Now: retryAt, Attempt: &model.Attempt{OccurrenceID: again[0].ID,
			EventID: web.ID, Attempt: 2, StartedAt: retryAt, DurationMS: 1000, LatenessMS: 5_400_000, Outcome: "failed"}}})

	_, err = s.InsertOccurrences(ctx, api.ID, []time.Time{t0.Add(10 * time.Minute), t0.Add(11 * time.Minute),
		t0.Add(12 * time.Minute)}, false, t0)
	require.NoError(t, err)
	claimed = claim(t, s, fired, 3)
	require.Len(t, claimed, 3)
	later := now.Add(time.Hour)
	recs = nil
	for i, o := range claimed {
		rec := repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok", Status: model.OccurrenceCompleted,
			Now: fired, Attempt: &model.Attempt{OccurrenceID: o.ID, EventID: api.ID, Attempt: 1, StartedAt: fired,
				DurationMS: []int64{7, 3, 50}[i], LatenessMS: []int64{2, 1, 30}[i], Outcome: "completed"}}
		if i == 2 {
			rec.Status, rec.NextAttemptAt, rec.Attempt = model.OccurrenceRetrying, &later, nil
		}
		recs = append(recs, rec)
	}
	recordAll(t, s, recs)
	_, err = s.InsertOccurrences(ctx, api.ID, []time.Time{t0.Add(13 * time.Minute), later}, false, t0)
	require.NoError(t, err)
	return now
}

func recordAll(t *testing.T, s *repository.Store, recs []repository.OutcomeRecord) {
	t.Helper()
	res, err := s.RecordOutcomes(context.Background(), recs)
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r)
	}
}

func TestStatsExactCountsAndPercentiles(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		now := seedStats(t, s)
		got, err := s.Stats(context.Background(), model.StatsFilter{Since: now.Add(-24 * time.Hour), Until: now,
			Now: now, Unrestricted: true})
		require.NoError(t, err)

		web := model.GroupStats{Occurrences: 20, ByStatus: map[model.OccurrenceStatus]int{"completed": 19, "failed": 1},
			Attempts:   21,
			DurationMS: model.Percentiles{Count: 21, P50: 110, P95: 200, P99: 1000},
			LatenessMS: model.Percentiles{Count: 20, P50: 45, P95: 90, P99: 95}}
		api := model.GroupStats{Occurrences: 4,
			ByStatus: map[model.OccurrenceStatus]int{"completed": 2, "retrying": 1, "pending": 1},
			Attempts: 2, Due: 1, Retrying: 1,
			DurationMS: model.Percentiles{Count: 2, P50: 3, P95: 7, P99: 7},
			LatenessMS: model.Percentiles{Count: 2, P50: 1, P95: 2, P99: 2}}
		total := model.GroupStats{Occurrences: 24,
			ByStatus: map[model.OccurrenceStatus]int{"completed": 21, "failed": 1, "retrying": 1, "pending": 1},
			Attempts: 23, Due: 1, Retrying: 1,
			DurationMS: model.Percentiles{Count: 23, P50: 100, P95: 200, P99: 1000},
			LatenessMS: model.Percentiles{Count: 22, P50: 40, P95: 90, P99: 95}}

		require.Len(t, got.ByAction, 2)
		if g := *got.ByAction["webhook"]; !equalGroup(g, web) {
			t.Errorf("webhook: got %+v, want %+v", g, web)
		}
		if g := *got.ByAction["apicall"]; !equalGroup(g, api) {
			t.Errorf("apicall: got %+v, want %+v", g, api)
		}
		if !equalGroup(got.Total, total) {
			t.Errorf("total: got %+v, want %+v", got.Total, total)
		}
	})
}

func TestStatsAreScoped(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		now := seedStats(t, s)
		got, err := s.Stats(ctx, model.StatsFilter{Since: now.Add(-24 * time.Hour), Until: now, Now: now,
			Scope: []string{"b"}})
		require.NoError(t, err)
		require.Len(t, got.ByAction, 1, "only the apicall event is readable")
		require.Equal(t, 4, got.Total.Occurrences)
		require.Equal(t, model.Percentiles{Count: 2, P50: 3, P95: 7, P99: 7}, got.Total.DurationMS)

		none, err := s.Stats(ctx, model.StatsFilter{Since: now.Add(-24 * time.Hour), Until: now, Now: now})
		require.NoError(t, err)
		require.Zero(t, none.Total.Occurrences, "an empty scope sees nothing")
		require.Empty(t, none.ByAction)

		narrow, err := s.Stats(ctx, model.StatsFilter{Since: t0.Add(-3 * day), Until: t0.Add(-day), Now: now,
			Unrestricted: true})
		require.NoError(t, err)
		require.Equal(t, 1, narrow.Total.Occurrences, "the window selects the old occurrence only")
		require.Equal(t, 1, narrow.Total.Due, "the queue is counted whatever the window")
	})
}

func TestQueueDepth(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		now := seedStats(t, s)
		due, retrying, err := s.QueueDepth(context.Background(), now)
		require.NoError(t, err)
		if due != 1 || retrying != 1 {
			t.Errorf("queue depth: got due=%d retrying=%d, want 1 and 1", due, retrying)
		}
	})
}

func equalGroup(a, b model.GroupStats) bool {
	if a.Occurrences != b.Occurrences || a.Attempts != b.Attempts || a.Due != b.Due || a.Retrying != b.Retrying ||
		a.DurationMS != b.DurationMS || a.LatenessMS != b.LatenessMS || len(a.ByStatus) != len(b.ByStatus) {
		return false
	}
	for k, v := range b.ByStatus {
		if a.ByStatus[k] != v {
			return false
		}
	}
	return true
}
