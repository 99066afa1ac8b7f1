package repository_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// bucketed is the raw answer as the rollups give it: percentiles are the
// lowest value of their histogram bucket (exact below 128 ms).
func bucketed(ps model.Percentiles) model.Percentiles {
	ps.P50, ps.P95, ps.P99 = repository.LatencyBucket(ps.P50), repository.LatencyBucket(ps.P95),
		repository.LatencyBucket(ps.P99)
	return ps
}

func bucketedStats(st model.Stats) model.Stats {
	st.Total.DurationMS, st.Total.LatenessMS = bucketed(st.Total.DurationMS), bucketed(st.Total.LatenessMS)
	for _, g := range st.ByAction {
		g.DurationMS, g.LatenessMS = bucketed(g.DurationMS), bucketed(g.LatenessMS)
	}
	return st
}

// seedRandomHistory delivers occurrences of two events (webhook, apicall)
// scheduled at random seconds over three hours, in waves of claims at
// random instants: completions, failures, retries and timeouts, durations
// and lateness spread below and above the histogram's exact range, and a
// few replays of finished rows; half the records as a one-time event's. It
// returns the instant after the last wave.
func seedRandomHistory(t *testing.T, s *repository.Store, rng *rand.Rand) time.Time {
	t.Helper()
	ctx := context.Background()
	web, api := newEvent("a"), newEvent("b")
	api.Action.Type = "apicall"
	mustCreate(t, s, web)
	mustCreate(t, s, api)
	for _, e := range []*model.Event{web, api} {
		seen := map[time.Time]bool{}
		var at []time.Time
		for range 70 {
			i := t0.Add(time.Duration(rng.IntN(3*3600)) * time.Second).Add(time.Duration(rng.IntN(1000)) * time.Millisecond)
			if !seen[i] {
				seen[i] = true
				at = append(at, i)
			}
		}
		_, err := s.InsertOccurrences(ctx, e.ID, at, false, t0)
		require.NoError(t, err)
	}
	now := t0
	var finished []string
	for now.Before(t0.Add(3*time.Hour + 20*time.Minute)) {
		now = now.Add(time.Duration(30+rng.IntN(400)) * time.Second)
		due := claim(t, s, now, 500)
		var recs []repository.OutcomeRecord
		for _, o := range due {
			started := now.Add(time.Duration(rng.IntN(30_000)) * time.Millisecond)
			duration := int64(rng.IntN(120))
			if rng.IntN(2) == 0 {
				duration = int64(rng.IntN(6000))
			}
			rec := repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok", Now: started,
				Attempt: &model.Attempt{OccurrenceID: o.ID, EventID: o.EventID, Attempt: o.AttemptCount,
					StartedAt: started, DurationMS: duration, LatenessMS: started.Sub(o.ScheduledAt).Milliseconds()}}
			switch r := rng.IntN(10); {
			case r < 6:
				rec.Status = model.OccurrenceCompleted
			case r < 8:
				rec.Status = model.OccurrenceFailed
			case r < 9:
				next := started.Add(time.Duration(1+rng.IntN(20)) * time.Minute)
				rec.Status, rec.NextAttemptAt = model.OccurrenceRetrying, &next
			default:
				rec.Status, rec.Reason, rec.Attempt, rec.Uncount = model.OccurrenceMissed, "catch_up_none", nil, true
			}
			if rec.Attempt != nil {
				rec.Attempt.Outcome = string(rec.Status)
			}
			// Half the records say their event is one-time: its punctuality
			// goes to punctuality_once instead of an hour and a day row,
			// and the two kinds of rows of an event must sum alike.
			rec.WholeSeries = rng.IntN(2) == 0
			recs = append(recs, rec)
			if rec.Status.Terminal() {
				finished = append(finished, o.ID)
			}
		}
		if len(recs) > 0 {
			recordAll(t, s, recs)
		}
		// Now and then the compactor runs (PostgreSQL): reads must sum
		// compacted and fresh rows alike.
		if rng.IntN(3) == 0 {
			_, err := s.CompactRollups(ctx, 1+rng.IntN(50))
			require.NoError(t, err)
		}
		// Now and then a finished row is replayed: it leaves its status.
		if len(finished) > 0 && rng.IntN(4) == 0 {
			i := rng.IntN(len(finished))
			_, err := s.RetryOccurrence(ctx, finished[i], now)
			require.NoError(t, err)
			finished = append(finished[:i], finished[i+1:]...)
		}
	}
	return now
}

// TestRollupStatsEqualRawHistory checks /stats and /stats/timeline read from
// the rollups against the same answers computed from the raw rows, over
// random history and random windows (aligned and not).
func TestRollupStatsEqualRawHistory(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		seed := time.Now().UnixNano()
		t.Logf("seed %d", seed)
		rng := rand.New(rand.NewPCG(uint64(seed), 24))
		now := seedRandomHistory(t, s, rng)
		ctx := context.Background()
		for i := range 12 {
			since := t0.Add(-10 * time.Minute).Add(time.Duration(rng.IntN(4*3600)) * time.Second)
			if i%3 == 0 {
				since = since.Truncate(time.Minute)
			} else {
				since = since.Add(time.Duration(rng.IntN(1000)) * time.Millisecond)
			}
			until := since.Add(time.Duration(1+rng.IntN(5*3600)) * time.Second)
			if i%4 == 0 {
				until = until.Truncate(time.Minute).Add(time.Minute)
			}
			for _, totalOnly := range []bool{false, true} {
				f := model.StatsFilter{Since: since, Until: until, Now: now, Unrestricted: true, TotalOnly: totalOnly}
				got, err := s.Stats(ctx, f)
				require.NoError(t, err)
				f.Raw = true
				raw, err := s.Stats(ctx, f)
				require.NoError(t, err)
				require.Equal(t, bucketedStats(raw), got, "window [%s, %s) total_only=%v", since, until, totalOnly)
			}
		}
		for _, step := range []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour} {
			since := t0.Add(-10 * time.Minute).Add(time.Duration(rng.IntN(3*3600)) * time.Second).Truncate(step)
			buckets := 1 + rng.IntN(int(4*time.Hour/step))
			f := model.TimelineFilter{Since: since, Step: step, Buckets: buckets, Unrestricted: true}
			got, err := s.Timeline(ctx, f)
			require.NoError(t, err)
			f.Raw = true
			raw, err := s.Timeline(ctx, f)
			require.NoError(t, err)
			for i := range raw {
				raw[i].LatenessMS = bucketed(raw[i].LatenessMS)
			}
			require.Equal(t, raw, got, "timeline step %s since %s", step, since)
		}
	})
}

// TestRollupsExactRightAfterDelivery: the moment an outcome is recorded,
// a window of whole minutes (read from the rollups alone) counts it.
func TestRollupsExactRightAfterDelivery(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent("a")
		mustCreate(t, s, e)
		at := t0.Add(90 * time.Second)
		const n = 37
		var instants []time.Time
		for i := range n {
			instants = append(instants, at.Add(time.Duration(i)*time.Millisecond))
		}
		_, err := s.InsertOccurrences(ctx, e.ID, instants, false, t0)
		require.NoError(t, err)
		f := model.StatsFilter{Since: t0, Until: t0.Add(5 * time.Minute), Now: at, Unrestricted: true}
		before, err := s.Stats(ctx, f)
		require.NoError(t, err)
		require.Equal(t, n, before.Total.ByStatus[model.OccurrencePending])
		var recs []repository.OutcomeRecord
		for _, o := range claim(t, s, at.Add(time.Second), n) {
			recs = append(recs, repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok",
				Status: model.OccurrenceCompleted, Now: at.Add(time.Second), Attempt: &model.Attempt{OccurrenceID: o.ID,
					EventID: e.ID, Attempt: 1, StartedAt: at.Add(time.Second), DurationMS: 12, Outcome: "completed"}})
		}
		require.Len(t, recs, n)
		recordAll(t, s, recs)
		got, err := s.Stats(ctx, f)
		require.NoError(t, err)
		require.Equal(t, map[model.OccurrenceStatus]int{model.OccurrenceCompleted: n}, got.Total.ByStatus)
		require.Equal(t, n, got.Total.Attempts)
		require.Equal(t, model.Percentiles{Count: n, P50: 12, P95: 12, P99: 12}, got.Total.DurationMS)
		tl, err := s.Timeline(ctx, model.TimelineFilter{Since: t0, Step: time.Minute, Buckets: 5, Unrestricted: true})
		require.NoError(t, err)
		require.Equal(t, n, tl[1].Completed, "the attempts started in the second minute")
		_, err = s.CompactRollups(ctx, 1000)
		require.NoError(t, err)
		compacted, err := s.Stats(ctx, f)
		require.NoError(t, err)
		require.Equal(t, got, compacted, "compaction changes no figure")
	})
}

// TestFreshMinutesFoldIntoEveryWidth: on PostgreSQL an outcome batch writes
// its latency histograms once per minute (width "M"), and the compactor
// adds each to its minute's, quarter's and hour's rows. Fresh rows an older
// version wrote in all three widths (a rolling upgrade) sit beside them and
// fold into their own. Every width reads the same figures before the
// compactor runs, between its batches and after.
func TestFreshMinutesFoldIntoEveryWidth(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent("a")
		mustCreate(t, s, e)
		// Two attempts of 10 ms, at 10:59:30 (hour 10, last quarter) and at
		// 11:14:10 (hour 11, first quarter): minute, quarter and hour
		// boundaries all between them.
		first := settle(t, s, e, t0.Add(59*time.Minute+30*time.Second), t0.Add(59*time.Minute+30*time.Second),
			model.OccurrenceCompleted, 1)
		require.NotEmpty(t, first.ID)
		second := settle(t, s, e, t0.Add(74*time.Minute+10*time.Second), t0.Add(74*time.Minute+10*time.Second),
			model.OccurrenceCompleted, 1)
		require.NotEmpty(t, second.ID)
		if s.Backend() == repository.Postgres {
			// What a version before "M" wrote for one attempt of 40 ms at
			// 10:59:30: a fresh row in each width.
			for _, w := range []struct {
				width string
				start time.Time
			}{{"m", t0.Add(59 * time.Minute)}, {"q", t0.Add(45 * time.Minute)}, {"h", t0}} {
				rawExec(t, s, `INSERT INTO latency_rollups (width, start, action_type, metric, bucket, n)
					VALUES (?, ?, 'webhook', 0, 40, 1)`, w.width, w.start)
			}
		}
		legacy, slowest := 0, int64(10)
		if s.Backend() == repository.Postgres {
			legacy, slowest = 1, 40
		}
		windows := []struct {
			name     string
			from, to time.Time
			count    int
			p99      int64
		}{
			{"the minute of the first", t0.Add(59 * time.Minute), t0.Add(60 * time.Minute), 1 + legacy, slowest},
			{"the quarter of the first", t0.Add(45 * time.Minute), t0.Add(60 * time.Minute), 1 + legacy, slowest},
			{"the hour of the first", t0, t0.Add(time.Hour), 1 + legacy, slowest},
			{"the hour of the second", t0.Add(time.Hour), t0.Add(2 * time.Hour), 1, 10},
			{"both hours", t0, t0.Add(2 * time.Hour), 2 + legacy, slowest},
			{"a quarter and minutes either side", t0.Add(44 * time.Minute), t0.Add(76 * time.Minute), 2 + legacy, slowest},
		}
		check := func(when string) {
			t.Helper()
			for _, w := range windows {
				st, err := s.Stats(ctx, model.StatsFilter{Since: w.from, Until: w.to, Now: t0.Add(3 * time.Hour),
					Unrestricted: true, TotalOnly: true})
				require.NoError(t, err)
				require.Equal(t, w.count, st.Total.DurationMS.Count, "%s: %s", when, w.name)
				require.Equal(t, w.p99, st.Total.DurationMS.P99, "%s: %s", when, w.name)
			}
			tl, err := s.Timeline(ctx, model.TimelineFilter{Since: t0, Step: time.Hour, Buckets: 2, Unrestricted: true})
			require.NoError(t, err)
			require.Equal(t, 1, tl[0].Completed, "%s: the hourly timeline", when)
			require.Equal(t, 1, tl[1].Completed, "%s: the hourly timeline", when)
		}
		check("before compaction")
		for { // in small batches, so some reads fall between them
			n, err := s.CompactRollups(ctx, 2)
			require.NoError(t, err)
			check("during compaction")
			if n == 0 {
				break
			}
		}
		check("after compaction")
	})
}

// TestPruneRollups: pruning removes the rollups of minutes before the
// cutoff and keeps the rest.
func TestPruneRollups(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent("a")
		mustCreate(t, s, e)
		old := settle(t, s, e, t0, t0, model.OccurrenceCompleted, 1)
		recent := settle(t, s, e, t0.Add(2*time.Hour), t0.Add(2*time.Hour), model.OccurrenceFailed, 1)
		require.NotEqual(t, old.ID, recent.ID)
		// A one-time event's deliveries, an old one and a recent one (outside
		// the windows read below): their punctuality rows (punctuality_once)
		// are pruned alike.
		once := newEvent("b")
		mustCreate(t, s, once)
		for _, at := range []time.Time{t0.Add(-30 * time.Minute), t0.Add(3*time.Hour + 30*time.Minute)} {
			_, err := s.InsertOccurrences(ctx, once.ID, []time.Time{at}, false, at)
			require.NoError(t, err)
			got, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: at, Limit: 1, Owner: "test", Token: "tok",
				LeaseUntil: at.Add(time.Minute)})
			require.NoError(t, err)
			require.Len(t, got, 1)
			recordAll(t, s, []repository.OutcomeRecord{{OccurrenceID: got[0].ID, LeaseToken: "tok",
				Status: model.OccurrenceCompleted, Now: at, WholeSeries: true, EventID: once.ID,
				Attempt: &model.Attempt{OccurrenceID: got[0].ID, EventID: once.ID, Attempt: 1, StartedAt: at,
					Outcome: string(model.OccurrenceCompleted)}}})
		}
		punctual := func() map[string]int {
			r, err := s.Punctuality(ctx, model.PunctualityFilter{From: t0.Add(-time.Hour), To: t0.Add(4 * time.Hour),
				Now: t0.Add(4 * time.Hour), GroupBy: model.PunctualityByEvent, Tolerance: time.Second,
				TrendStep: time.Hour, Unrestricted: true})
			require.NoError(t, err)
			out := map[string]int{}
			for _, g := range r.Groups {
				out[*g.Key] = g.Due
			}
			return out
		}
		require.Equal(t, 2, punctual()[once.ID])
		window := func(from time.Time) model.Stats {
			st, err := s.Stats(ctx, model.StatsFilter{Since: from, Until: from.Add(time.Hour), Now: t0.Add(3 * time.Hour),
				Unrestricted: true})
			require.NoError(t, err)
			return st
		}
		require.Equal(t, 1, window(t0).Total.ByStatus[model.OccurrenceCompleted])
		n, err := s.PruneRollups(ctx, t0.Add(time.Hour), 1)
		require.NoError(t, err)
		require.Positive(t, n)
		for n > 0 { // bounded batches: call until nothing is left
			n, err = s.PruneRollups(ctx, t0.Add(time.Hour), 1)
			require.NoError(t, err)
		}
		pruned := window(t0)
		require.Zero(t, pruned.Total.Occurrences, "the old minute's rollups are gone")
		require.Zero(t, pruned.Total.Attempts)
		kept := window(t0.Add(2 * time.Hour))
		require.Equal(t, map[model.OccurrenceStatus]int{model.OccurrenceFailed: 1}, kept.Total.ByStatus)
		require.Equal(t, 1, kept.Total.Attempts)
		require.Equal(t, 1, punctual()[once.ID], "the one-time event's old hour is gone, its recent one kept")
	})
}

// TestLatencyBucket pins the histogram's buckets: exact below 128, then 64
// per power of two, each named by its lowest value.
func TestLatencyBucket(t *testing.T) {
	for _, c := range []struct{ v, want int64 }{{-5, -5}, {0, 0}, {127, 127}, {128, 128}, {129, 128}, {255, 254},
		{256, 256}, {259, 256}, {260, 260}, {1000, 1000}, {1001, 1000}, {5_400_000, 5_373_952}} {
		if got := repository.LatencyBucket(c.v); got != c.want {
			t.Errorf("LatencyBucket(%d) = %d, want %d", c.v, got, c.want)
		}
	}
}
