package repository_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// pathWindow covers, in whole minutes, every instant and attempt of
// TestRollupsFollowEveryPath: /stats over it reads the rollups alone.
var pathWindow = model.StatsFilter{Since: t0.Add(-time.Hour), Until: t0.Add(6 * time.Hour),
	Now: t0.Add(6 * time.Hour), Unrestricted: true}

// requireRollupsExact checks that /stats and /stats/timeline read from the
// rollups equal the raw recount, before and after a compaction, and
// returns the raw figures.
func requireRollupsExact(t *testing.T, s *repository.Store, step string) model.Stats {
	t.Helper()
	ctx := context.Background()
	raw := pathWindow
	raw.Raw = true
	want, err := s.Stats(ctx, raw)
	require.NoError(t, err)
	tf := model.TimelineFilter{Since: pathWindow.Since, Step: 15 * time.Minute, Buckets: 7 * 4, Unrestricted: true}
	tf.Raw = true
	wantTL, err := s.Timeline(ctx, tf)
	require.NoError(t, err)
	for i := range wantTL {
		wantTL[i].LatenessMS = bucketed(wantTL[i].LatenessMS)
	}
	tf.Raw = false
	punct := model.PunctualityFilter{From: pathWindow.Since.Truncate(time.Hour), To: pathWindow.Until.Add(time.Hour),
		Now: pathWindow.Now, GroupBy: model.PunctualityByEvent, Tolerance: 30 * time.Second, TrendStep: time.Hour,
		Unrestricted: true, Raw: true}
	wantPunct, err := s.Punctuality(ctx, punct)
	require.NoError(t, err)
	punct.Raw = false
	for _, when := range []string{"fresh", "compacted"} {
		gotPunct, err := s.Punctuality(ctx, punct)
		require.NoError(t, err)
		require.Equal(t, wantPunct, gotPunct, "%s: punctuality from the rollups (%s) equals the raw recount", step, when)
		got, err := s.Stats(ctx, pathWindow)
		require.NoError(t, err)
		require.Equal(t, bucketedStats(want), got, "%s: stats from the rollups (%s) equal the raw recount", step, when)
		gotTL, err := s.Timeline(ctx, tf)
		require.NoError(t, err)
		require.Equal(t, wantTL, gotTL, "%s: timeline from the rollups (%s) equals the raw recount", step, when)
		_, err = s.CompactRollups(ctx, 1000)
		require.NoError(t, err)
	}
	return want
}

// TestRollupsFollowEveryPath walks every path that finishes an occurrence,
// reopens a finished one or inserts attempts — create with finished first
// rows, batch create, planned inserts and reinstatements, the outcome
// batch (set-based and one by one, with and without the action type),
// acknowledgements, cancellations, skips, replays, an endpoint's resumption
// and a 410's pause — and checks after each step that the rollups equal a
// raw recount, and that the step did change the finished counts (so a path
// that forgot its rollup fails here).
func TestRollupsFollowEveryPath(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		at := func(m int) time.Time { return t0.Add(time.Duration(m)*time.Minute + 7*time.Second) }
		web, api := newEvent("a"), newEvent("b")
		api.Action.Type = "apicall"
		ep := newEndpoint(t0, "team-a")
		mustCreateEndpoint(t, s, ep)
		viaEP := endpointEvent(ep.ID, "all")
		mustCreate(t, s, viaEP)
		prev := requireRollupsExact(t, s, "empty")
		// step runs a path and checks the rollups followed it.
		step := func(name string, fn func()) {
			t.Helper()
			fn()
			got := requireRollupsExact(t, s, name)
			require.NotEqual(t, prev.Total, got.Total, "%s changed the figures", name)
			prev = got
		}
		idAt := func(e *model.Event, m int) string { return occIDAt(t, s, e.ID, at(m)) }
		record := func(recs ...repository.OutcomeRecord) {
			t.Helper()
			res, err := s.RecordOutcomes(ctx, recs)
			require.NoError(t, err)
			for _, r := range res {
				require.NoError(t, r)
			}
		}
		attempt := func(o model.Occurrence, started time.Time, outcome model.OccurrenceStatus, ms int64) *model.Attempt {
			return &model.Attempt{OccurrenceID: o.ID, EventID: o.EventID, Attempt: o.AttemptCount, StartedAt: started,
				DurationMS: ms, Outcome: string(outcome), LatenessMS: started.Sub(o.ScheduledAt).Milliseconds()}
		}

		step("create with a skipped first row", func() {
			require.NoError(t, s.CreateEvent(ctx, web, model.Planned{At: at(1), Status: model.OccurrencePending},
				model.Planned{At: at(2), Status: model.OccurrenceSkipped, Reason: model.ReasonCalendar, Note: "holiday"}))
		})
		step("batch create with a skipped first row", func() {
			require.NoError(t, s.CreateEvents(ctx, []repository.NewEvent{{Event: api, First: []model.Planned{
				{At: at(3), Status: model.OccurrenceSkipped, Reason: model.ReasonDSTGap, Note: "gap"},
				{At: at(4), Status: model.OccurrencePending}}}}))
		})
		step("planned rows, some skipped", func() {
			_, err := s.InsertPlanned(ctx, web.ID, []model.Planned{{At: at(5), Status: model.OccurrencePending},
				{At: at(6), Status: model.OccurrencePending}, {At: at(7), Status: model.OccurrencePending},
				{At: at(8), Status: model.OccurrenceSkipped, Reason: model.ReasonManual},
				{At: at(30), Status: model.OccurrencePending}, {At: at(31), Status: model.OccurrencePending},
				{At: at(32), Status: model.OccurrenceSkipped, Reason: model.ReasonCalendar}}, t0)
			require.NoError(t, err)
			_, err = s.InsertOccurrences(ctx, api.ID, []time.Time{at(5), at(6), at(7), at(40)}, false, t0)
			require.NoError(t, err)
		})
		step("outcome batch: completed, failed, retrying", func() {
			now := at(7).Add(time.Second)
			due := claim(t, s, now, 100)
			require.Len(t, due, 8)
			var recs []repository.OutcomeRecord
			for i, o := range due {
				status := []model.OccurrenceStatus{model.OccurrenceCompleted, model.OccurrenceFailed,
					model.OccurrenceRetrying}[i%3]
				started := now.Add(time.Duration(i) * 20 * time.Second)
				r := repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok", Status: status, Now: started,
					Attempt: attempt(o, started, status, int64(40*i*i)), EventID: o.EventID, Ran: true}
				if status == model.OccurrenceRetrying {
					next := at(200)
					r.NextAttemptAt = &next
				}
				if o.EventID == web.ID {
					r.ActionType = "webhook" // as the dispatcher does; the api rows are looked up
				}
				recs = append(recs, r)
			}
			record(recs...)
		})
		step("outcomes one by one: missed, awaiting an ack, acked before it was recorded", func() {
			_, err := s.InsertOccurrences(ctx, web.ID, []time.Time{at(10), at(11), at(12)}, false, t0)
			require.NoError(t, err)
			now := at(12).Add(time.Second)
			due := claim(t, s, now, 100)
			require.Len(t, due, 3)
			require.NoError(t, s.Acknowledge(ctx, idAt(web, 12), now)) // still dispatching: kept for the outcome
			var recs []repository.OutcomeRecord
			for _, o := range due {
				r := repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok", Now: now, EventID: web.ID}
				switch {
				case o.ScheduledAt.Equal(at(10)):
					r.Status, r.Reason, r.Uncount = model.OccurrenceMissed, model.ReasonCatchUpWindow, true
				default:
					deadline := now.Add(time.Hour)
					r.Status, r.AckDeadline = model.OccurrenceAwaitingAck, &deadline
					r.Attempt = attempt(o, now, model.OccurrenceAwaitingAck, 3)
				}
				recs = append(recs, r)
			}
			record(recs...)
		})
		step("acknowledgement", func() {
			require.NoError(t, s.Acknowledge(ctx, idAt(web, 11), at(13)))
		})
		step("cancel pending", func() {
			n, err := s.CancelPendingOccurrences(ctx, api.ID, t0, false, model.ReasonEventDeleted, at(13))
			require.NoError(t, err)
			require.Positive(t, n)
		})
		step("cancel future on an edit: a skipped row becomes cancelled", func() {
			n, err := s.CancelFutureOccurrences(ctx, web.ID, at(20), false, model.ReasonRuleChanged, at(13))
			require.NoError(t, err)
			require.Equal(t, 3, n) // at(30) and at(31) pending, at(32) skipped
		})
		step("skip one", func() {
			_, err := s.InsertOccurrences(ctx, web.ID, []time.Time{at(50)}, false, t0)
			require.NoError(t, err)
			require.NoError(t, s.SkipOccurrence(ctx, idAt(web, 50), model.ReasonManual, "by hand", at(13)))
		})
		step("reinstate cancelled and skipped rows", func() {
			n, err := s.InsertPlanned(ctx, web.ID, []model.Planned{{At: at(30), Status: model.OccurrencePending},
				{At: at(31), Status: model.OccurrenceSkipped, Reason: model.ReasonCalendar},
				{At: at(32), Status: model.OccurrencePending}, {At: at(50), Status: model.OccurrencePending},
				{At: at(60), Status: model.OccurrenceSkipped, Reason: model.ReasonCalendar},
				{At: at(5), Status: model.OccurrencePending}}, at(13)) // at(5) fired: left alone
			require.NoError(t, err)
			require.Equal(t, 5, n)
		})
		step("replay one", func() {
			_, err := s.RetryOccurrence(ctx, idAt(web, 11), at(14))
			require.NoError(t, err)
		})
		step("replay many", func() {
			res, err := s.RetryOccurrences(ctx, model.RetryFilter{Status: []model.OccurrenceStatus{model.OccurrenceFailed},
				Unrestricted: true, Limit: 100, BatchSize: 1}, at(14))
			require.NoError(t, err)
			require.Positive(t, res.Requeued)
		})
		step("endpoint disabled: its rows fail", func() {
			_, err := s.InsertOccurrences(ctx, viaEP.ID, []time.Time{at(70), at(71)}, false, t0)
			require.NoError(t, err)
			require.NoError(t, s.DisableEndpoint(ctx, ep.ID, at(15), "alice", "api"))
			n, err := s.CancelPendingOccurrences(ctx, viaEP.ID, t0, false, model.ReasonEndpointDisabled, at(15))
			require.NoError(t, err)
			require.Equal(t, 2, n)
		})
		step("endpoint enabled: its failed rows resume", func() {
			n, err := s.EnableEndpoint(ctx, ep.ID, 3*time.Hour, at(72), "alice", "api")
			require.NoError(t, err)
			require.Equal(t, 2, n)
		})
		step("a 410 pauses the event: its future rows are skipped", func() {
			_, err := s.InsertOccurrences(ctx, web.ID, []time.Time{at(80), at(90)}, false, t0)
			require.NoError(t, err)
			now := at(80).Add(time.Second)
			var recs []repository.OutcomeRecord
			for _, o := range claim(t, s, now, 100) {
				r := repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok", Status: model.OccurrenceCompleted,
					Now: now, Attempt: attempt(o, now, model.OccurrenceCompleted, 700), EventID: o.EventID, Ran: true}
				if o.ScheduledAt.Equal(at(80)) {
					r.Status, r.Attempt.Outcome, r.PauseReason = model.OccurrenceFailed, "failed", "gone"
				}
				recs = append(recs, r)
			}
			record(recs...)
			occ, err := s.GetOccurrence(ctx, idAt(web, 90))
			require.NoError(t, err)
			require.Equal(t, model.OccurrenceSkipped, occ.Status)
		})
		require.Positive(t, prev.Total.ByStatus[model.OccurrenceCompleted])
		require.Positive(t, prev.Total.Attempts)
	})
}

// TestRollupTriggersAreGone: since migration 0021 no trigger keeps the
// rollups on PostgreSQL (the code paths write them), so claims and lease
// renewals no longer pay for them. The triggers left are the notes of held
// changes (migration 0034) and the mirrors of occurrences (0036): row
// triggers whose WHEN leaves the hot path's writes out, and one statement
// trigger on inserts, which a delivery never makes.
func TestRollupTriggersAreGone(t *testing.T) {
	s := repositorytest.Postgres(t)
	var triggers []struct {
		Name     string `db:"tgname"`
		Function string `db:"proname"`
		Row      bool   `db:"row_level"`
		Insert   bool   `db:"on_insert"`
		When     bool   `db:"has_when"`
	}
	require.NoError(t, s.DB().Select(&triggers, `SELECT t.tgname, p.proname, (t.tgtype & 1) = 1 AS row_level,
		(t.tgtype & 4) = 4 AS on_insert, t.tgqual IS NOT NULL AS has_when FROM pg_trigger t
		JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_proc p ON p.oid = t.tgfoid
		WHERE n.nspname = current_schema() AND NOT t.tgisinternal AND t.tgparentid = 0`))
	names := map[string]string{}
	for _, tr := range triggers {
		names[tr.Name] = tr.Function
		switch {
		case !tr.Row:
			require.True(t, tr.Insert, "%s, a statement trigger, fires on inserts only", tr.Name)
		case tr.Name != "events_held_delete":
			require.True(t, tr.When, "%s fires only for the writes it notes", tr.Name)
		}
	}
	require.Equal(t, map[string]string{"occurrences_held_change": "qhronos_note_held_change",
		"occurrences_held_delete": "qhronos_note_held_change", "events_held_change": "qhronos_note_held_change",
		"events_held_delete": "qhronos_note_held_change", "occurrences_mirror_insert": "qhronos_mirror_inserted",
		"occurrences_mirror_update": "qhronos_mirror_changed", "occurrences_mirror_delete": "qhronos_mirror_changed"},
		names)
	var functions []string
	require.NoError(t, s.DB().Select(&functions, `SELECT p.proname FROM pg_proc p
		JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = current_schema()
		AND (p.proname LIKE 'qhronos\_rollup%' OR p.proname = 'qhronos_latency_bucket')`))
	require.Empty(t, functions)
}
