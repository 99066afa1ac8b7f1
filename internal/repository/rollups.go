package repository

import (
	"context"
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// Rollups (migration 0013) are per-minute counters, so an unrestricted
// /stats or /stats/timeline reads a bounded number of rows whatever the
// history holds:
//
//	occurrence_rollups  finished occurrences by scheduled minute, action type, status, reason
//	attempt_rollups     attempts by start minute, action type, endpoint, outcome
//	latency_rollups     histograms of durations and first-attempt lateness, per minute, quarter hour and hour
//
// They are written by the code paths that change the rows, in the same
// transaction (migration 0021 dropped the triggers that did it on every
// claim, lease renewal and outcome): RecordOutcomes adds its batch's
// counts, summed per key in Go, one multi-row insert per rollup table; the
// rare paths that end or reopen rows (cancellations, skips, replays,
// acknowledgements, endpoint resumptions, planned inserts and
// reinstatements, creates with finished first rows) add the difference of
// the rows they changed, through updateOccurrences or rollupDeltas. A
// statement that moves an occurrence into or out of a finished status, or
// inserts attempts, without them leaves the rollups wrong:
// TestRollupsFollowEveryPath walks every such path. On PostgreSQL the
// counts are "fresh" rows (no upsert, so concurrent outcome transactions
// never queue on the current minute's counter) that CompactRollups folds;
// SQLite, with one writer, upserts the one row of each key. A batch's fresh
// latency histograms are written once, per minute, with width "M"
// (freshMinute): the compactor adds each to the minute's, the quarter's
// and the hour's compacted rows, and reads of any width count the "M"
// rows not yet folded. Written three times over (m, q, h) they were two
// thirds of every outcome batch's rollup rows, and of the compactor's work.
//
// Exactness: a window's whole minutes come from the rollups, its partial
// minutes at either end from the raw rows (at most two minutes, read by
// index), and its unfinished occurrences (the live queue) from the partial
// indexes on the waiting and held states. Counts are therefore exact at any
// instant; percentiles are exact below 128 ms and otherwise the lowest value
// of the histogram bucket the exact percentile falls in (under 1.6 % below
// it): LatencyBucket of the raw answer.
//
// Rollups count history, not the live table: rows the archiver moves (or a
// partition it detaches) stay counted until PruneRollups removes their
// minutes with the history's purge. A tag-scoped principal's stats cannot
// come from rollups that do not know tags; they read the raw rows of that
// scope's events (Stats and Timeline decide).

// LatencyBucket is the histogram bucket of a millisecond value, named by its
// lowest value: the value itself below 128, then 64 buckets per power of
// two. It mirrors qhronos_latency_bucket of migration 0013, which built the
// first rollups (0021 dropped it with the triggers).
func LatencyBucket(v int64) int64 {
	if v < 128 {
		return v
	}
	width := min(bits.Len64(uint64(v))-1-6, 40)
	return v - v%(int64(1)<<width)
}

// rollupInstant scans a rollup's minute: a time on PostgreSQL, the store's
// fixed-width text on SQLite when the driver leaves it as text.
type rollupInstant struct{ time.Time }

func (r *rollupInstant) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		r.Time = v.UTC()
		return nil
	case string:
		return r.parse(v)
	case []byte:
		return r.parse(string(v))
	}
	return fmt.Errorf("rollup instant: unexpected %T", src)
}

func (r *rollupInstant) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("rollup instant %q: %w", s, err)
	}
	r.Time = t.UTC()
	return nil
}

// histograms are latency histograms by action type: metric 0 durations,
// metric 1 first-attempt lateness, bucket → count.
type histograms map[string]*[2]map[int64]int

func (h histograms) add(action string, metric int, bucket int64, n int) {
	m := h[action]
	if m == nil {
		m = &[2]map[int64]int{{}, {}}
		h[action] = m
	}
	m[metric][bucket] += n
}

// fill sets a Percentiles from a histogram by nearest rank, the definition
// the raw path uses.
func fillPercentiles(ps *model.Percentiles, hist map[int64]int) {
	buckets := make([]int64, 0, len(hist))
	n := 0
	for b, c := range hist {
		if c > 0 {
			buckets = append(buckets, b)
			n += c
		}
	}
	*ps = model.Percentiles{Count: n}
	if n == 0 {
		return
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i] < buckets[j] })
	for _, p := range percentiles {
		rank, seen := (p*n+99)/100, 0
		for _, b := range buckets {
			seen += hist[b]
			if seen >= rank {
				setPercentile(ps, p, b)
				break
			}
		}
	}
}

// minuteSplit cuts [since, until) into the whole minutes the rollups answer
// and the partial minutes at either end that the raw rows answer.
type minuteSplit struct {
	since, from, to, until time.Time // raw [since, from), rollups [from, to), raw [to, until)
}

func splitMinutes(since, until time.Time) minuteSplit {
	since, until = since.UTC(), until.UTC()
	from := since.Truncate(time.Minute)
	if from.Before(since) {
		from = from.Add(time.Minute)
	}
	to := until.Truncate(time.Minute)
	if !from.Before(to) {
		// Under two minutes: all raw.
		return minuteSplit{since: since, from: until, to: until, until: until}
	}
	return minuteSplit{since: since, from: from, to: to, until: until}
}

// rawEdges are the partial minutes of the split, empty ones left out.
func (m minuteSplit) rawEdges() [][2]time.Time {
	var out [][2]time.Time
	if m.since.Before(m.from) {
		out = append(out, [2]time.Time{m.since, m.from})
	}
	if m.to.Before(m.until) {
		out = append(out, [2]time.Time{m.to, m.until})
	}
	return out
}

// statsFromRollups fills the counts and percentiles of an unrestricted
// Stats from the rollups, the raw partial minutes and the live queue.
func (s *Store) statsFromRollups(ctx context.Context, f model.StatsFilter, out *model.Stats,
	group func(string) *model.GroupStats) error {
	split := splitMinutes(f.Since, f.Until)
	all := sqlPredicate{sql: "1 = 1"}
	hist := histograms{}
	for _, edge := range split.rawEdges() {
		ef := f
		ef.Since, ef.Until = edge[0], edge[1]
		if err := s.statusCounts(ctx, ef, all, out, group); err != nil {
			return err
		}
		if err := s.rawLatencies(ctx, edge[0], edge[1], hist); err != nil {
			return err
		}
	}
	if split.from.Before(split.to) {
		if err := s.rolledUpStatusCounts(ctx, split.from, split.to, out, group); err != nil {
			return err
		}
		if err := s.rolledUpLatencies(ctx, split.from, split.to, hist); err != nil {
			return err
		}
	}
	total := [2]map[int64]int{{}, {}}
	for action, h := range hist {
		g := group(action)
		fillPercentiles(&g.DurationMS, h[0])
		fillPercentiles(&g.LatenessMS, h[1])
		g.Attempts = g.DurationMS.Count
		for metric := range h {
			for b, n := range h[metric] {
				total[metric][b] += n
			}
		}
	}
	fillPercentiles(&out.Total.DurationMS, total[0])
	fillPercentiles(&out.Total.LatenessMS, total[1])
	out.Total.Attempts = out.Total.DurationMS.Count
	return nil
}

// rolledUpStatusCounts adds the finished occurrences of whole minutes
// [from, to) from the rollups and the unfinished ones from the live rows,
// each set read through the partial index on exactly its states.
func (s *Store) rolledUpStatusCounts(ctx context.Context, from, to time.Time, out *model.Stats,
	group func(string) *model.GroupStats) error {
	q := statusSQL(`SELECT action_type, status, reason, SUM(n) AS n FROM occurrence_rollups
		WHERE minute >= ? AND minute < ? GROUP BY action_type, status, reason
		UNION ALL
		SELECT e.action_type, o.status, COALESCE(o.reason, ''), COUNT(*) FROM unfinished_occurrences o JOIN events e ON e.id = o.event_id
		WHERE o.status IN {waiting} AND o.scheduled_at >= ? AND o.scheduled_at < ?
		GROUP BY e.action_type, o.status, COALESCE(o.reason, '')
		UNION ALL
		SELECT e.action_type, o.status, COALESCE(o.reason, ''), COUNT(*) FROM unfinished_occurrences o JOIN events e ON e.id = o.event_id
		WHERE o.status IN {held} AND o.scheduled_at >= ? AND o.scheduled_at < ?
		GROUP BY e.action_type, o.status, COALESCE(o.reason, '')`)
	var rows []struct {
		Action string                 `db:"action_type"`
		Status model.OccurrenceStatus `db:"status"`
		Reason string                 `db:"reason"`
		N      int                    `db:"n"`
	}
	a, b := s.ts(from), s.ts(to)
	if err := s.selectAll(ctx, &rows, q, a, b, a, b, a, b); err != nil {
		return fmt.Errorf("read occurrence rollups: %w", err)
	}
	for _, r := range rows {
		if r.N == 0 {
			continue
		}
		g := group(r.Action)
		g.ByStatus[r.Status] += r.N
		g.Occurrences += r.N
		out.Total.ByStatus[r.Status] += r.N
		out.Total.Occurrences += r.N
		if r.Reason != "" {
			g.CountReason(r.Status, r.Reason, r.N)
			out.Total.CountReason(r.Status, r.Reason, r.N)
		}
	}
	// A status whose rollup nets to zero (replayed away) is not reported,
	// as the raw count would not report it.
	for _, g := range append([]*model.GroupStats{&out.Total}, groupsOf(out)...) {
		for st, n := range g.ByStatus {
			if n == 0 {
				delete(g.ByStatus, st)
			}
		}
	}
	return nil
}

func groupsOf(out *model.Stats) []*model.GroupStats {
	gs := make([]*model.GroupStats, 0, len(out.ByAction))
	for _, g := range out.ByAction {
		gs = append(gs, g)
	}
	return gs
}

// rawLatencies adds the attempts started in [from, to) to hist, bucketed
// here; grouped by value in the database so that few rows leave it.
func (s *Store) rawLatencies(ctx context.Context, from, to time.Time, hist histograms) error {
	q := `SELECT e.action_type AS action_type, 0 AS metric, a.duration_ms AS v, COUNT(*) AS n
		FROM attempts a JOIN events e ON e.id = a.event_id
		WHERE a.started_at >= ? AND a.started_at < ? GROUP BY e.action_type, a.duration_ms
		UNION ALL
		SELECT e.action_type, 1, a.lateness_ms, COUNT(*)
		FROM attempts a JOIN events e ON e.id = a.event_id
		WHERE a.started_at >= ? AND a.started_at < ? AND a.attempt = 1 AND a.manual = ?
		GROUP BY e.action_type, a.lateness_ms`
	var rows []struct {
		Action string `db:"action_type"`
		Metric int    `db:"metric"`
		V      int64  `db:"v"`
		N      int    `db:"n"`
	}
	a, b := s.ts(from), s.ts(to)
	if err := s.selectAll(ctx, &rows, q, a, b, a, b, false); err != nil {
		return fmt.Errorf("read attempt latencies: %w", err)
	}
	for _, r := range rows {
		hist.add(r.Action, r.Metric, LatencyBucket(r.V), r.N)
	}
	return nil
}

// latencyWidths are the widths of latency_rollups, widest first.
var latencyWidths = []struct {
	name string
	d    time.Duration
}{{"h", time.Hour}, {"q", 15 * time.Minute}, {"m", time.Minute}}

// freshLatencyWidths are the widths PostgreSQL's fresh rows are written in.
var freshLatencyWidths = []struct {
	name string
	d    time.Duration
}{{freshMinute, time.Minute}}

// freshMinute is the width of the fresh latency rows an outcome batch
// writes on PostgreSQL: one minute's histogram, which CompactRollups adds
// to the m, q and h rows of its minute, quarter and hour.
const freshMinute = "M"

// latencyOfWidth selects the latency_rollups rows that make up histograms
// of width ?, counting the fresh minutes not folded yet. Its start range,
// aligned to the width, holds exactly the minutes the width's rows cover.
const latencyOfWidth = `(width = ? OR (width = '` + freshMinute + `' AND NOT compacted))`

// latencySpan is a range of latency_rollups rows of one width.
type latencySpan struct {
	width    string
	from, to time.Time
}

// latencySpans covers whole minutes [from, to) with as few rows as the
// widths allow: whole hours, then quarter hours, then minutes at the ends.
func latencySpans(from, to time.Time, level int) []latencySpan {
	if !from.Before(to) {
		return nil
	}
	w := latencyWidths[level]
	if level == len(latencyWidths)-1 {
		return []latencySpan{{w.name, from, to}}
	}
	a := from.Truncate(w.d)
	if a.Before(from) {
		a = a.Add(w.d)
	}
	b := to.Truncate(w.d)
	if !a.Before(b) {
		return latencySpans(from, to, level+1)
	}
	out := latencySpans(from, a, level+1)
	out = append(out, latencySpan{w.name, a, b})
	return append(out, latencySpans(b, to, level+1)...)
}

// rolledUpLatencies adds the histograms of whole minutes [from, to).
func (s *Store) rolledUpLatencies(ctx context.Context, from, to time.Time, hist histograms) error {
	spans := latencySpans(from, to, 0)
	parts := make([]string, len(spans))
	args := make([]any, 0, 3*len(spans))
	for i, sp := range spans {
		parts[i] = `SELECT action_type, metric, bucket, n FROM latency_rollups WHERE ` + latencyOfWidth +
			` AND start >= ? AND start < ?`
		args = append(args, sp.width, s.ts(sp.from), s.ts(sp.to))
	}
	q := `SELECT action_type, metric, bucket, SUM(n) AS n FROM (` + strings.Join(parts, " UNION ALL ") +
		`) r GROUP BY action_type, metric, bucket`
	var rows []struct {
		Action string `db:"action_type"`
		Metric int    `db:"metric"`
		Bucket int64  `db:"bucket"`
		N      int    `db:"n"`
	}
	if err := s.selectAll(ctx, &rows, q, args...); err != nil {
		return fmt.Errorf("read latency rollups: %w", err)
	}
	for _, r := range rows {
		hist.add(r.Action, r.Metric, r.Bucket, r.N)
	}
	return nil
}

// timelineFromRollups fills unrestricted timeline buckets (aligned to whole
// minutes by the API) from the attempt and latency rollups.
func (s *Store) timelineFromRollups(ctx context.Context, f model.TimelineFilter, out []model.TimelineBucket) error {
	until := f.Since.Add(time.Duration(f.Buckets) * f.Step)
	index := func(t time.Time) int { return int(t.Sub(f.Since) / f.Step) }
	var counts []struct {
		Minute  rollupInstant `db:"minute"`
		Outcome string        `db:"outcome"`
		N       int           `db:"n"`
	}
	err := s.selectAll(ctx, &counts, `SELECT minute, outcome, SUM(n) AS n FROM attempt_rollups
		WHERE minute >= ? AND minute < ? GROUP BY minute, outcome`, s.ts(f.Since), s.ts(until))
	if err != nil {
		return fmt.Errorf("read attempt rollups: %w", err)
	}
	for _, r := range counts {
		i := index(r.Minute.Time)
		if i < 0 || i >= len(out) {
			continue
		}
		out[i].Attempts += r.N
		switch model.OccurrenceStatus(r.Outcome) {
		case model.OccurrenceCompleted, model.OccurrenceRunning: // a run started: the delivery succeeded
			out[i].Completed += r.N
		case model.OccurrenceFailed, model.OccurrenceRetrying:
			out[i].Failed += r.N
		}
	}
	// Each step reads the widest histograms that tile it.
	width := "m"
	for _, w := range latencyWidths {
		if f.Step%w.d == 0 && f.Since.Equal(f.Since.Truncate(w.d)) {
			width = w.name
			break
		}
	}
	var lat []struct {
		Start  rollupInstant `db:"start"`
		Bucket int64         `db:"bucket"`
		N      int           `db:"n"`
	}
	err = s.selectAll(ctx, &lat, `SELECT start, bucket, SUM(n) AS n FROM latency_rollups
		WHERE `+latencyOfWidth+` AND metric = 1 AND start >= ? AND start < ? GROUP BY start, bucket`,
		width, s.ts(f.Since), s.ts(until))
	if err != nil {
		return fmt.Errorf("read latency rollups: %w", err)
	}
	hists := make([]map[int64]int, len(out))
	for _, r := range lat {
		i := index(r.Start.Time)
		if i < 0 || i >= len(out) {
			continue
		}
		if hists[i] == nil {
			hists[i] = map[int64]int{}
		}
		hists[i][r.Bucket] += r.N
	}
	for i, h := range hists {
		if h != nil {
			fillPercentiles(&out[i].LatenessMS, h)
		}
	}
	return nil
}

// PruneRollups deletes the rollups of minutes before cutoff, at most limit
// rows of each table per call; it returns how many rows it deleted. The
// archiver calls it with the instant its history is purged at, so rollups
// live exactly as long as the history they summarize.
func (s *Store) PruneRollups(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	total := 0
	for _, t := range []struct{ table, column string }{
		{"occurrence_rollups", "minute"}, {"attempt_rollups", "minute"}, {"latency_rollups", "start"},
		{"punctuality_rollups", "start"}, {"punctuality_fresh", "start"}, {"punctuality_once", "start"}} {
		q := `DELETE FROM ` + t.table + ` WHERE ` + s.d.inPick(s.d.rowID,
			`SELECT `+s.d.rowID+` FROM `+t.table+` WHERE `+t.column+` < ? LIMIT ?`)
		res, err := s.exec(ctx, q, s.ts(cutoff), limit)
		if err != nil {
			return total, fmt.Errorf("prune %s: %w", t.table, err)
		}
		n, _ := res.RowsAffected()
		total += int(n)
	}
	return total, nil
}

// rollupCompactions fold the fresh rows addRollups appends on PostgreSQL into
// the one compacted row of each key, a bounded batch per table: the fresh
// rows a batch deletes are the ones it adds, so a concurrent writer's new
// rows are neither lost nor counted twice.
var rollupCompactions = []string{
	`WITH fresh AS (DELETE FROM occurrence_rollups WHERE ctid = ANY(ARRAY(
		SELECT ctid FROM occurrence_rollups WHERE NOT compacted LIMIT $1))
		RETURNING minute, action_type, status, reason, n)
	INSERT INTO occurrence_rollups AS r (minute, action_type, status, reason, n, compacted)
	SELECT minute, action_type, status, reason, SUM(n), true FROM fresh GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
	ON CONFLICT (minute, action_type, status, reason) WHERE compacted DO UPDATE SET n = r.n + EXCLUDED.n`,
	`WITH fresh AS (DELETE FROM attempt_rollups WHERE ctid = ANY(ARRAY(
		SELECT ctid FROM attempt_rollups WHERE NOT compacted LIMIT $1))
		RETURNING minute, action_type, endpoint_id, outcome, n)
	INSERT INTO attempt_rollups AS r (minute, action_type, endpoint_id, outcome, n, compacted)
	SELECT minute, action_type, endpoint_id, outcome, SUM(n), true FROM fresh GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
	ON CONFLICT (minute, action_type, endpoint_id, outcome) WHERE compacted DO UPDATE SET n = r.n + EXCLUDED.n`,
	// A fresh minute ("M") goes into the m, q and h rows of its minute,
	// quarter and hour (epoch arithmetic: UTC whatever the session's zone,
	// as time.Truncate); fresh m, q and h rows (written by versions before
	// "M") into their own.
	`WITH fresh AS (DELETE FROM latency_rollups WHERE ctid = ANY(ARRAY(
		SELECT ctid FROM latency_rollups WHERE NOT compacted LIMIT $1))
		RETURNING width, start, action_type, metric, bucket, n),
	spread AS (SELECT width, start, action_type, metric, bucket, n FROM fresh WHERE width <> '` + freshMinute + `'
		UNION ALL
		SELECT w.width, to_timestamp(floor(extract(epoch FROM f.start) / w.secs) * w.secs), f.action_type, f.metric,
			f.bucket, f.n
		FROM fresh f CROSS JOIN (VALUES ('m', 60), ('q', 900), ('h', 3600)) AS w (width, secs)
		WHERE f.width = '` + freshMinute + `')
	INSERT INTO latency_rollups AS r (width, start, action_type, metric, bucket, n, compacted)
	SELECT width, start, action_type, metric, bucket, SUM(n), true FROM spread
	GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
	ON CONFLICT (width, start, action_type, metric, bucket) WHERE compacted DO UPDATE SET n = r.n + EXCLUDED.n`,
}

// CompactRollups folds up to limit fresh rollup rows of each table into
// their keys' compacted rows and returns how many compacted rows it wrote. One
// compactor at a time (a transaction-scoped advisory lock; another instance
// skips its turn). On SQLite addRollups writes compacted rows itself, except
// the punctuality rollups, which both stores fold here.
func (s *Store) CompactRollups(ctx context.Context, limit int) (int, error) {
	total, err := s.compactPunctuality(ctx, limit)
	if err != nil {
		return 0, fmt.Errorf("compact punctuality rollups: %w", err)
	}
	if s.d.backend != Postgres {
		return total, nil
	}
	err = s.WithTx(ctx, func(tx *Store) error {
		var locked bool
		if err := tx.get(ctx, &locked,
			`SELECT pg_try_advisory_xact_lock(hashtext('qhronos-rollups:' || current_schema()))`); err != nil {
			return err
		}
		if !locked {
			return nil
		}
		for _, q := range rollupCompactions {
			// Run as written: $1 is already PostgreSQL's placeholder.
			res, err := tx.q.ExecContext(ctx, q, limit)
			if err := tx.note(err, true); err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			total += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("compact rollups: %w", err)
	}
	return total, nil
}

// rollupDeltas is what one transaction adds to the rollups: finished
// occurrences entering (+1) or leaving (-1) their key, and new attempts.
// Its rows are summed per key here and written by addRollups, one multi-row
// insert per rollup table. A delta whose action type is not known (a record
// that does not carry it, a rare path's changed rows) is resolved from its
// event in one read; one whose event is gone is not counted, as the raw
// counts (joined on events) would not count it.
type rollupDeltas struct {
	occurrences []occurrenceDelta
	attempts    []attemptDelta
	// oneTime names the events whose deltas are a one-time event's
	// delivery: their punctuality goes to punctuality_once (see
	// punctualityKey).
	oneTime map[string]bool
}

// markOneTime notes that event's deltas are a one-time event's delivery.
func (d *rollupDeltas) markOneTime(event string) {
	if d.oneTime == nil {
		d.oneTime = map[string]bool{}
	}
	d.oneTime[event] = true
}

type occurrenceDelta struct {
	eventID, action string
	at              time.Time
	status, reason  string
	n               int
}

type attemptDelta struct {
	action string
	a      *model.Attempt
}

// finished counts n rows (n is 1 or -1) of the given state when it is a
// finished one; unfinished rows are the live queue, counted from the live
// rows, and are ignored.
func (d *rollupDeltas) finished(eventID, action string, at time.Time, status string, reason *string, n int) {
	if !model.OccurrenceStatus(status).Terminal() {
		return
	}
	r := ""
	if reason != nil {
		r = *reason
	}
	d.occurrences = append(d.occurrences, occurrenceDelta{eventID: eventID, action: action, at: at, status: status,
		reason: r, n: n})
}

// attempt counts a new attempt row (its action type may be "": resolved
// from a.EventID).
func (d *rollupDeltas) attempt(action string, a *model.Attempt) {
	d.attempts = append(d.attempts, attemptDelta{action: action, a: a})
}

// changedOccurrence is one row an update changed, before and after.
type changedOccurrence struct {
	ID        string        `db:"id"`
	EventID   string        `db:"event_id"`
	At        rollupInstant `db:"scheduled_at"`
	Status    string        `db:"status"`
	Reason    *string       `db:"reason"`
	OldAt     rollupInstant `db:"old_at"`
	OldStatus string        `db:"old_status"`
	OldReason *string       `db:"old_reason"`
}

// changed counts a row's move between states: out of its old key, into its
// new one (either may be unfinished, and then is not counted).
func (d *rollupDeltas) changed(r changedOccurrence) {
	if r.OldStatus == r.Status && r.OldAt.Equal(r.At.Time) && equalReason(r.OldReason, r.Reason) {
		return
	}
	d.finished(r.EventID, "", r.OldAt.Time, r.OldStatus, r.OldReason, -1)
	d.finished(r.EventID, "", r.At.Time, r.Status, r.Reason, 1)
}

func equalReason(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// planned counts new rows of an event inserted in a given state.
func (d *rollupDeltas) planned(eventID, action string, rows []model.Planned) {
	for _, r := range rows {
		var reason *string
		if r.Status != model.OccurrencePending {
			reason = &r.Reason
		}
		d.finished(eventID, action, model.RoundUp(r.At), string(r.Status), reason, 1)
	}
}

// updateOccurrences runs `UPDATE occurrences SET set WHERE where` and adds
// to the rollups, in the same transaction, what it moved into or out of a
// finished status; it returns the rows it changed. The rare paths that end
// or reopen rows (cancellations, skips, replays, endpoint resumptions) go
// through it. PostgreSQL reads each row's old state in the statement that
// changes it (a self-join on the rows it locks first); SQLite, with one
// writer, reads them just before.
func (s *Store) updateOccurrences(ctx context.Context, set string, setArgs []any, where string,
	whereArgs []any) ([]changedOccurrence, error) {
	var rows []changedOccurrence
	err := s.WithTx(ctx, func(tx *Store) error {
		if tx.d.backend == Postgres {
			q := `UPDATE occurrences SET ` + set + `
				FROM (SELECT id, scheduled_at, status, reason FROM occurrences WHERE ` + where + tx.d.forUpdate + `)
					AS old (old_id, old_at, old_status, old_reason)
				WHERE occurrences.id = old.old_id AND occurrences.scheduled_at = old.old_at
				RETURNING occurrences.id, occurrences.event_id, occurrences.scheduled_at, occurrences.status,
					occurrences.reason, old.old_at, old.old_status, old.old_reason`
			if err := tx.selectAll(ctx, &rows, q, append(append([]any{}, setArgs...), whereArgs...)...); err != nil {
				return err
			}
		} else {
			var old []changedOccurrence
			if err := tx.selectAll(ctx, &old, `SELECT id, event_id, scheduled_at AS old_at, status AS old_status,
				reason AS old_reason, scheduled_at, status FROM occurrences WHERE `+where, whereArgs...); err != nil {
				return err
			}
			if len(old) == 0 {
				return nil
			}
			if err := tx.selectAll(ctx, &rows, `UPDATE occurrences SET `+set+` WHERE `+where+`
				RETURNING id, event_id, scheduled_at, status, reason`,
				append(append([]any{}, setArgs...), whereArgs...)...); err != nil {
				return err
			}
			before := make(map[string]changedOccurrence, len(old))
			for _, o := range old {
				before[o.ID] = o
			}
			for i := range rows {
				o := before[rows[i].ID]
				rows[i].OldAt, rows[i].OldStatus, rows[i].OldReason = o.OldAt, o.OldStatus, o.OldReason
			}
		}
		var d rollupDeltas
		for _, r := range rows {
			d.changed(r)
		}
		return tx.addRollups(ctx, &d)
	})
	return rows, err
}

// rollup keys, one per table.
type occurrenceRollupKey struct {
	minute                 time.Time
	action, status, reason string
}

type attemptRollupKey struct {
	minute                    time.Time
	action, endpoint, outcome string
}

type latencyRollupKey struct {
	width  string
	start  time.Time
	action string
	metric int
	bucket int64
}

// addRollups writes d's counts, summed per key: fresh rows on PostgreSQL
// (no upsert, so concurrent transactions never wait on a counter row; the
// compactor folds them), the one row of each key on SQLite (one writer).
func (s *Store) addRollups(ctx context.Context, d *rollupDeltas) error {
	if len(d.occurrences) == 0 && len(d.attempts) == 0 {
		return nil
	}
	actions, err := s.actionTypes(ctx, d)
	if err != nil {
		return err
	}
	occ := map[occurrenceRollupKey]int{}
	for _, o := range d.occurrences {
		action := o.action
		if action == "" {
			if action = actions[o.eventID]; action == "" {
				continue
			}
		}
		occ[occurrenceRollupKey{o.at.UTC().Truncate(time.Minute), action, o.status, o.reason}] += o.n
	}
	att := map[attemptRollupKey]int{}
	lat := map[latencyRollupKey]int{}
	for _, x := range d.attempts {
		a, action := x.a, x.action
		if action == "" {
			if action = actions[a.EventID]; action == "" {
				continue
			}
		}
		endpoint := ""
		if a.EndpointID != nil {
			endpoint = *a.EndpointID
		}
		started := a.StartedAt.UTC()
		att[attemptRollupKey{started.Truncate(time.Minute), action, endpoint, a.Outcome}]++
		widths := latencyWidths
		if s.d.backend == Postgres {
			widths = freshLatencyWidths
		}
		for _, w := range widths {
			start := started.Truncate(w.d)
			lat[latencyRollupKey{w.name, start, action, 0, LatencyBucket(a.DurationMS)}]++
			if a.Attempt == 1 && !a.Manual {
				lat[latencyRollupKey{w.name, start, action, 1, LatencyBucket(a.LatenessMS)}]++
			}
		}
	}
	punct := punctualityDeltas(d)
	if s.d.backend == Postgres {
		return s.insertRollupArrays(ctx, occ, att, lat, punct)
	}
	if err := s.addPunctualityFresh(ctx, punct); err != nil {
		return err
	}
	var rows [][]any
	for k, n := range occ {
		if n != 0 {
			rows = append(rows, []any{s.ts(k.minute), k.action, k.status, k.reason, n})
		}
	}
	if err := s.insertRollups(ctx, "occurrence_rollups", "minute, action_type, status, reason", rows); err != nil {
		return err
	}
	rows = rows[:0]
	for k, n := range att {
		rows = append(rows, []any{s.ts(k.minute), k.action, k.endpoint, k.outcome, n})
	}
	if err := s.insertRollups(ctx, "attempt_rollups", "minute, action_type, endpoint_id, outcome", rows); err != nil {
		return err
	}
	rows = rows[:0]
	for k, n := range lat {
		rows = append(rows, []any{k.width, s.ts(k.start), k.action, k.metric, k.bucket, n})
	}
	return s.insertRollups(ctx, "latency_rollups", "width, start, action_type, metric, bucket", rows)
}

// insertRollupArrays adds the three tables' counts, the fresh punctuality rows
// and the one-time events' punctuality rows on PostgreSQL in one
// statement of the same text whatever the counts (see outcomeArrays): one
// round trip of the outcome transaction instead of three.
func (s *Store) insertRollupArrays(ctx context.Context, occ map[occurrenceRollupKey]int, att map[attemptRollupKey]int,
	lat map[latencyRollupKey]int, punct map[punctualityKey]*punctualityDelta) error {
	var oMinute, aMinute, lStart []time.Time
	var oAction, oStatus, oReason, aAction, aEndpoint, aOutcome, lWidth, lAction []string
	var oN, aN, lBucket, lN []int64
	var lMetric []int
	for k, n := range occ {
		if n != 0 {
			oMinute, oAction, oStatus, oReason = append(oMinute, k.minute), append(oAction, k.action),
				append(oStatus, k.status), append(oReason, k.reason)
			oN = append(oN, int64(n))
		}
	}
	for k, n := range att {
		aMinute, aAction, aEndpoint, aOutcome = append(aMinute, k.minute), append(aAction, k.action),
			append(aEndpoint, k.endpoint), append(aOutcome, k.outcome)
		aN = append(aN, int64(n))
	}
	for k, n := range lat {
		lWidth, lStart, lAction, lMetric = append(lWidth, k.width), append(lStart, k.start), append(lAction, k.action),
			append(lMetric, k.metric)
		lBucket, lN = append(lBucket, k.bucket), append(lN, int64(n))
	}
	if len(oN)+len(aN)+len(lN)+len(punct) == 0 {
		return nil
	}
	_, err := s.exec(ctx, `WITH o AS (INSERT INTO occurrence_rollups (minute, action_type, status, reason, n)
			SELECT * FROM unnest(?::timestamptz[], ?::text[], ?::text[], ?::text[], ?::bigint[])),
		p AS (INSERT INTO punctuality_fresh (start, event_id, `+punctualityColumns+`)
			SELECT * FROM unnest(?::timestamptz[], ?::uuid[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[],
				?::bigint[], ?::text[])),
		once AS (INSERT INTO punctuality_once (start, event_id, `+punctualityColumns+`)
			SELECT * FROM unnest(?::timestamptz[], ?::uuid[], ?::bigint[], ?::bigint[], ?::bigint[],
				?::bigint[], ?::bigint[], ?::text[])),
		a AS (INSERT INTO attempt_rollups (minute, action_type, endpoint_id, outcome, n)
			SELECT * FROM unnest(?::timestamptz[], ?::text[], ?::text[], ?::text[], ?::bigint[]))
		INSERT INTO latency_rollups (width, start, action_type, metric, bucket, n)
			SELECT * FROM unnest(?::text[], ?::timestamptz[], ?::text[], ?::int[], ?::bigint[], ?::bigint[])`,
		append(append(append([]any{utcs(oMinute), oAction, oStatus, oReason, oN}, punctualityArrays(punct, false)...),
			punctualityArrays(punct, true)...),
			utcs(aMinute), aAction, aEndpoint, aOutcome, aN, lWidth, utcs(lStart), lAction, lMetric, lBucket, lN)...)
	if err != nil {
		return fmt.Errorf("add rollups: %w", err)
	}
	return nil
}

// utcs returns ts in UTC (non-nil: an empty array, not NULL).
func utcs(ts []time.Time) []time.Time {
	out := make([]time.Time, len(ts))
	for i, t := range ts {
		out[i] = t.UTC()
	}
	return out
}

// insertRollups adds rows (the key's columns, then n) to a rollup table.
func (s *Store) insertRollups(ctx context.Context, table, key string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	width := len(rows[0])
	row := "(" + placeholders(width) + ")"
	start := 0
	for _, size := range s.batchSizes(len(rows), 256, 3000/width) {
		chunk := rows[start : start+size]
		start += size
		args := make([]any, 0, width*len(chunk))
		for _, r := range chunk {
			args = append(args, r...)
		}
		q := `INSERT INTO ` + table + ` (` + key + `, n) VALUES ` +
			strings.TrimSuffix(strings.Repeat(row+", ", len(chunk)), ", ")
		if s.d.backend != Postgres {
			q += ` ON CONFLICT (` + key + `) DO UPDATE SET n = n + excluded.n`
		}
		if _, err := s.execHot(ctx, q, args...); err != nil {
			return fmt.Errorf("add %s: %w", table, err)
		}
	}
	return nil
}

// actionTypes reads the action type of the events of d's deltas that do
// not carry one.
func (s *Store) actionTypes(ctx context.Context, d *rollupDeltas) (map[string]string, error) {
	seen := map[string]bool{}
	var ids []string
	need := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, o := range d.occurrences {
		if o.action == "" {
			need(o.eventID)
		}
	}
	for _, a := range d.attempts {
		if a.action == "" {
			need(a.a.EventID)
		}
	}
	out := make(map[string]string, len(ids))
	for start := 0; start < len(ids); start += insertBatch {
		chunk := ids[start:min(start+insertBatch, len(ids))]
		var rows []struct {
			ID     string `db:"id"`
			Action string `db:"action_type"`
		}
		if err := s.selectAll(ctx, &rows, `SELECT id, action_type FROM events WHERE id IN (`+
			placeholders(len(chunk))+`)`, stringArgs(chunk)...); err != nil {
			return nil, fmt.Errorf("read action types for rollups: %w", err)
		}
		for _, r := range rows {
			out[r.ID] = r.Action
		}
	}
	return out, nil
}
