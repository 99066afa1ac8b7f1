package repository

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// The punctuality report (GET /stats/punctuality) counts, per event and
// hour of the scheduled instant, how the instants ended and how late their
// first scheduled attempt was. Reports group those rows by event, endpoint
// or tag over any window of whole hours, so they read one row per event and
// hour (or day), never the history.
//
// The outcome transaction appends one "fresh" row per event and hour it
// touched (punctuality_fresh, no index: the cheapest row write there is);
// compactPunctuality folds them into one row per event and hour and one per
// event and day (punctuality_rollups). A row's lateness histogram is a short
// text ("bucket:count,…") merged in Go: one row per event-day holds the
// whole distribution, where a row per bucket would multiply a month's report
// by the distribution's width.

// punctualityBounds are the lower bounds of the lateness histogram's
// buckets in milliseconds: exact below 10, then 22 a decade on values people
// pick as tolerances (100 ms, 250 ms, 1 s, 1.5 s, 2 s, 5 s, 30 s, 1 min…),
// so that those tolerances are exact and a percentile is at most 20 % under
// the value. The last bucket (9 × 10⁹ ms, 104 days) holds everything above.
var punctualityBounds = func() [punctualityBuckets]int64 {
	var out [punctualityBuckets]int64
	for i := range 10 {
		out[i] = int64(i)
	}
	i := 10
	for scale := int64(1); scale <= 100_000_000; scale *= 10 {
		for _, m := range punctualityMantissas {
			out[i] = m * scale
			i++
		}
	}
	return out
}()

var punctualityMantissas = [...]int64{10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 25, 28, 30, 35, 40, 45, 50, 60, 70, 75,
	80, 90}

// punctualityBuckets is the histogram's size: 0–9 ms, then nine decades.
const punctualityBuckets = 10 + 9*len(punctualityMantissas)

// punctualityIndex is the histogram index of a lateness in milliseconds;
// negative lateness (sent early) counts as 0.
func punctualityIndex(ms int64) int {
	i := sort.Search(punctualityBuckets, func(i int) bool { return punctualityBounds[i] > ms })
	return max(i-1, 0)
}

// PunctualityBucket is the histogram bucket (its lower bound) of a lateness
// in milliseconds.
func PunctualityBucket(ms int64) int64 { return punctualityBounds[punctualityIndex(ms)] }

// punctualityHist counts first scheduled attempts per lateness bucket.
type punctualityHist [punctualityBuckets]int

// punctualityCounts is one row's figures: finished instants by status and
// the lateness histogram of first scheduled attempts.
type punctualityCounts struct {
	completed, failed, missed, skipped, cancelled, pending int
	lateness                                               *punctualityHist
}

func (c *punctualityCounts) add(o *punctualityCounts) {
	c.completed += o.completed
	c.failed += o.failed
	c.missed += o.missed
	c.skipped += o.skipped
	c.cancelled += o.cancelled
	c.pending += o.pending
	if o.lateness != nil {
		for i, n := range o.lateness {
			if n != 0 {
				c.late(i, n)
			}
		}
	}
}

// late counts n first attempts in bucket i.
func (c *punctualityCounts) late(i, n int) {
	if c.lateness == nil {
		c.lateness = &punctualityHist{}
	}
	c.lateness[i] += n
}

// status counts n instants entering (1) or leaving (-1) a finished status.
func (c *punctualityCounts) status(st string, n int) {
	switch model.OccurrenceStatus(st) {
	case model.OccurrenceCompleted:
		c.completed += n
	case model.OccurrenceFailed:
		c.failed += n
	case model.OccurrenceMissed:
		c.missed += n
	case model.OccurrenceSkipped:
		c.skipped += n
	case model.OccurrenceCancelled:
		c.cancelled += n
	}
}

func (c *punctualityCounts) empty() bool {
	if c.completed != 0 || c.failed != 0 || c.missed != 0 || c.skipped != 0 || c.cancelled != 0 || c.pending != 0 {
		return false
	}
	return c.lateness == nil || *c.lateness == punctualityHist{}
}

// encodeLateness writes a histogram as "bucket:count,…" by bucket.
func encodeLateness(h *punctualityHist) string {
	if h == nil {
		return ""
	}
	var sb strings.Builder
	for i, n := range h {
		if n == 0 {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.FormatInt(punctualityBounds[i], 10))
		sb.WriteByte(':')
		sb.WriteString(strconv.Itoa(n))
	}
	return sb.String()
}

// latenessItem is one bucket of an encoded histogram.
type latenessItem struct{ index, n int }

// decodeLateness appends an encoded histogram's buckets to out.
func decodeLateness(text string, out []latenessItem) ([]latenessItem, error) {
	for text != "" {
		item, rest, _ := strings.Cut(text, ",")
		text = rest
		b, n, ok := strings.Cut(item, ":")
		bucket, err1 := strconv.ParseInt(b, 10, 64)
		count, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil {
			return out, fmt.Errorf("punctuality histogram item %q", item)
		}
		out = append(out, latenessItem{punctualityIndex(bucket), count})
	}
	return out, nil
}

// percentiles are the nearest-rank percentiles of a histogram, each named
// by its bucket's lower bound.
func (h *punctualityHist) percentiles() model.Percentiles {
	var out model.Percentiles
	if h == nil {
		return out
	}
	for _, n := range h {
		out.Count += n
	}
	if out.Count == 0 {
		return out
	}
	for _, p := range percentiles {
		rank, seen := (p*out.Count+99)/100, 0
		for i, n := range h {
			if seen += n; seen >= rank {
				setPercentile(&out, p, punctualityBounds[i])
				break
			}
		}
	}
	return out
}

// punctualityKey names an event's hour (or day) in the rollups.
type punctualityKey struct {
	start time.Time
	event string
}

// punctualityDeltas sums a transaction's rollup deltas per event and hour
// of the scheduled instant. Deltas whose event is gone still count: the
// report keeps a deleted event's past.
func punctualityDeltas(d *rollupDeltas) map[punctualityKey]*punctualityCounts {
	out := map[punctualityKey]*punctualityCounts{}
	at := func(event string, t time.Time) *punctualityCounts {
		k := punctualityKey{t.UTC().Truncate(time.Hour), event}
		c := out[k]
		if c == nil {
			c = &punctualityCounts{}
			out[k] = c
		}
		return c
	}
	for _, o := range d.occurrences {
		if o.eventID != "" {
			at(o.eventID, o.at).status(o.status, o.n)
		}
	}
	for _, x := range d.attempts {
		a := x.a
		if a.Attempt != 1 || a.Manual || a.EventID == "" {
			continue
		}
		scheduled := a.ScheduledAt
		if scheduled.IsZero() {
			scheduled = a.StartedAt.Add(-time.Duration(a.LatenessMS) * time.Millisecond)
		}
		at(a.EventID, scheduled).late(punctualityIndex(a.LatenessMS), 1)
	}
	for k, c := range out {
		if c.empty() {
			delete(out, k)
		}
	}
	return out
}

// punctualityColumns are a punctuality row's figures, in order.
const punctualityColumns = "completed, failed, missed, skipped, cancelled, lateness"

// punctualityRow scans a punctuality row.
type punctualityRow struct {
	Start     rollupInstant `db:"start"`
	Width     string        `db:"width"`
	EventID   string        `db:"event_id"`
	Completed int           `db:"completed"`
	Failed    int           `db:"failed"`
	Missed    int           `db:"missed"`
	Skipped   int           `db:"skipped"`
	Cancelled int           `db:"cancelled"`
	Lateness  string        `db:"lateness"`
}

func (r *punctualityRow) counts() (*punctualityCounts, error) {
	c := &punctualityCounts{completed: r.Completed, failed: r.Failed, missed: r.Missed, skipped: r.Skipped,
		cancelled: r.Cancelled}
	items, err := decodeLateness(r.Lateness, nil)
	for _, it := range items {
		c.late(it.index, it.n)
	}
	return c, err
}

// addPunctualityFresh appends the fresh rows of a transaction's deltas
// (SQLite; PostgreSQL writes them in insertRollupArrays' statement).
func (s *Store) addPunctualityFresh(ctx context.Context, rows map[punctualityKey]*punctualityCounts) error {
	if len(rows) == 0 {
		return nil
	}
	const width = 8
	const row = "(?, ?, ?, ?, ?, ?, ?, ?), "
	keys := make([]punctualityKey, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	start := 0
	for _, size := range preparedChunks(len(keys), 128) {
		chunk := keys[start : start+size]
		start += size
		args := make([]any, 0, width*len(chunk))
		for _, k := range chunk {
			c := rows[k]
			args = append(args, s.ts(k.start), k.event, c.completed, c.failed, c.missed, c.skipped, c.cancelled,
				encodeLateness(c.lateness))
		}
		q := `INSERT INTO punctuality_fresh (start, event_id, ` + punctualityColumns + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(row, len(chunk)), ", ")
		if _, err := s.execHot(ctx, q, args...); err != nil {
			return fmt.Errorf("add punctuality: %w", err)
		}
	}
	return nil
}

// punctualityArrays are the fresh rows as one array per column, for
// PostgreSQL's one-statement rollup insert.
func punctualityArrays(rows map[punctualityKey]*punctualityCounts) []any {
	n := len(rows)
	starts, events, lateness := make([]time.Time, 0, n), make([]string, 0, n), make([]string, 0, n)
	cols := [5][]int64{}
	for k, c := range rows {
		starts, events, lateness = append(starts, k.start.UTC()), append(events, k.event),
			append(lateness, encodeLateness(c.lateness))
		for i, v := range []int{c.completed, c.failed, c.missed, c.skipped, c.cancelled} {
			cols[i] = append(cols[i], int64(v))
		}
	}
	for i := range cols {
		if cols[i] == nil {
			cols[i] = []int64{}
		}
	}
	return []any{starts, events, cols[0], cols[1], cols[2], cols[3], cols[4], lateness}
}

// compactPunctuality folds up to limit fresh punctuality rows into the
// hour and day rows of their events and returns how many rows it wrote.
// One compactor at a time on PostgreSQL (an advisory lock; another instance
// skips its turn): the merge reads and rewrites rows.
func (s *Store) compactPunctuality(ctx context.Context, limit int) (int, error) {
	written := 0
	err := s.WithTx(ctx, func(tx *Store) error {
		if tx.d.backend == Postgres {
			var locked bool
			if err := tx.get(ctx, &locked,
				`SELECT pg_try_advisory_xact_lock(hashtext('qhronos-punctuality:' || current_schema()))`); err != nil {
				return err
			}
			if !locked {
				return nil
			}
		}
		var fresh []punctualityRow
		q := `DELETE FROM punctuality_fresh WHERE ` + tx.d.inPick(tx.d.rowID,
			`SELECT `+tx.d.rowID+` FROM punctuality_fresh LIMIT ?`) +
			` RETURNING start, 'h' AS width, event_id, ` + punctualityColumns
		if err := tx.selectAll(ctx, &fresh, q, limit); err != nil {
			return fmt.Errorf("take fresh punctuality rows: %w", err)
		}
		if len(fresh) == 0 {
			return nil
		}
		type wideKey struct {
			width string
			punctualityKey
		}
		merged := map[wideKey]*punctualityCounts{}
		for i := range fresh {
			r := &fresh[i]
			c, err := r.counts()
			if err != nil {
				return err
			}
			hour := r.Start.Time
			for _, k := range []wideKey{{"h", punctualityKey{hour, r.EventID}},
				{"d", punctualityKey{hour.Truncate(24 * time.Hour), r.EventID}}} {
				if merged[k] == nil {
					merged[k] = &punctualityCounts{}
				}
				merged[k].add(c)
			}
		}
		keys := make([]wideKey, 0, len(merged))
		for k := range merged {
			keys = append(keys, k)
		}
		// The rows already there, by exact key (primary key probes).
		const perRead = 300
		for start := 0; start < len(keys); start += perRead {
			chunk := keys[start:min(start+perRead, len(keys))]
			args := make([]any, 0, 3*len(chunk))
			row := tx.d.typedRow("text", "timestamptz", "uuid")
			for _, k := range chunk {
				args = append(args, k.width, tx.ts(k.start), k.event)
			}
			var old []punctualityRow
			if err := tx.selectAll(ctx, &old, `WITH k (width, start, event_id) AS (VALUES `+
				strings.TrimSuffix(strings.Repeat(row+", ", len(chunk)), ", ")+`)
				SELECT r.start, r.width, r.event_id, `+prefixed("r.", punctualityColumns)+`
				FROM punctuality_rollups r JOIN k ON r.width = k.width AND r.start = k.start AND r.event_id = k.event_id`,
				args...); err != nil {
				return fmt.Errorf("read punctuality rollups: %w", err)
			}
			for i := range old {
				r := &old[i]
				c, err := r.counts()
				if err != nil {
					return err
				}
				merged[wideKey{strings.TrimSpace(r.Width), punctualityKey{r.Start.Time, r.EventID}}].add(c)
			}
		}
		var rows [][]any
		for k, c := range merged {
			rows = append(rows, []any{k.width, tx.ts(k.start), k.event, c.completed, c.failed, c.missed, c.skipped,
				c.cancelled, encodeLateness(c.lateness)})
		}
		const width = 9
		row := "(" + placeholders(width) + ")"
		for start := 0; start < len(rows); start += 3000 / width {
			chunk := rows[start:min(start+3000/width, len(rows))]
			args := make([]any, 0, width*len(chunk))
			for _, r := range chunk {
				args = append(args, r...)
			}
			if _, err := tx.exec(ctx, `INSERT INTO punctuality_rollups (width, start, event_id, `+punctualityColumns+`)
				VALUES `+strings.TrimSuffix(strings.Repeat(row+", ", len(chunk)), ", ")+`
				ON CONFLICT (width, start, event_id) DO UPDATE SET completed = excluded.completed,
					failed = excluded.failed, missed = excluded.missed, skipped = excluded.skipped,
					cancelled = excluded.cancelled, lateness = excluded.lateness`, args...); err != nil {
				return fmt.Errorf("write punctuality rollups: %w", err)
			}
		}
		written = len(rows)
		return nil
	})
	return written, err
}

// Punctuality reports how the instants scheduled in [f.From, f.To) (whole
// hours) went, per group and per trend step: from the rollups (whole days
// from the day rows, the hours around them from the hour rows, what the
// compactor has not folded yet from the fresh rows) and, for the instants
// that have not ended, from the live rows.
func (s *Store) Punctuality(ctx context.Context, f model.PunctualityFilter) (model.PunctualityReport, error) {
	out := model.PunctualityReport{From: f.From.UTC(), To: f.To.UTC(), GroupBy: f.GroupBy,
		ToleranceMS: PunctualityBucket(f.Tolerance.Milliseconds()), Groups: []model.PunctualityGroup{},
		Trend: []model.PunctualityPoint{}}
	out.TrendStep = "1h"
	if f.TrendStep >= 24*time.Hour {
		out.TrendStep = "1d"
	}
	scope, ok := s.punctualityScope("event_id", f)
	if !ok {
		out.Total = punctualityFigures(&punctualityCounts{}, out.ToleranceMS)
		return out, nil
	}
	byEvent, byStep, err := s.punctualityRows(ctx, f, scope)
	if err != nil {
		return out, err
	}
	groups, err := s.punctualityGroups(ctx, f, byEvent)
	if err != nil {
		return out, err
	}
	total := &punctualityCounts{}
	for _, c := range byEvent {
		total.add(c)
	}
	out.Total = punctualityFigures(total, out.ToleranceMS)
	for _, g := range groups {
		out.Groups = append(out.Groups, model.PunctualityGroup{Key: g.key, Name: g.name,
			PunctualityCounts: punctualityFigures(g.counts, out.ToleranceMS)})
	}
	sort.Slice(out.Groups, func(i, j int) bool {
		a, b := out.Groups[i], out.Groups[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Key != nil && (b.Key == nil || *a.Key < *b.Key)
	})
	for start := f.From.UTC().Truncate(f.TrendStep); start.Before(f.To); start = start.Add(f.TrendStep) {
		c := byStep[start]
		if c == nil {
			c = &punctualityCounts{}
		}
		out.Trend = append(out.Trend, model.PunctualityPoint{Start: start,
			PunctualityCounts: punctualityFigures(c, out.ToleranceMS)})
	}
	return out, nil
}

// punctualityScope is the predicate on event_id of the principal's scope
// and the report's tag filter; ok is false when it can match nothing.
func (s *Store) punctualityScope(column string, f model.PunctualityFilter) (sqlPredicate, bool) {
	p := sqlPredicate{sql: "1 = 1"}
	if !f.Unrestricted {
		if len(f.Scope) == 0 {
			return p, false
		}
		p = sqlPredicate{sql: column + ` IN (SELECT event_id FROM event_tags WHERE tag IN (` +
			placeholders(len(f.Scope)) + `))`, args: stringArgs(f.Scope)}
	}
	if len(f.Tags) > 0 {
		p.sql += ` AND ` + column + ` IN (SELECT event_id FROM event_tags WHERE tag IN (` + placeholders(len(f.Tags)) + `))`
		p.args = append(p.args, stringArgs(f.Tags)...)
	}
	return p, true
}

// punctualityRows reads the window's figures per event and per trend step.
func (s *Store) punctualityRows(ctx context.Context, f model.PunctualityFilter, scope sqlPredicate) (
	map[string]*punctualityCounts, map[time.Time]*punctualityCounts, error) {
	byEvent, byStep := map[string]*punctualityCounts{}, map[time.Time]*punctualityCounts{}
	count := func(event string, at time.Time, c *punctualityCounts) {
		if byEvent[event] == nil {
			byEvent[event] = &punctualityCounts{}
		}
		byEvent[event].add(c)
		step := at.UTC().Truncate(f.TrendStep)
		if byStep[step] == nil {
			byStep[step] = &punctualityCounts{}
		}
		byStep[step].add(c)
	}
	// Whole days from the day rows when the trend is daily (an hourly trend
	// needs the hours); the hours outside them from the hour rows.
	dayFrom, dayTo := f.From, f.From
	if f.TrendStep >= 24*time.Hour {
		dayFrom = f.From.UTC().Add(24*time.Hour - time.Nanosecond).Truncate(24 * time.Hour)
		dayTo = f.To.UTC().Truncate(24 * time.Hour)
		if !dayFrom.Before(dayTo) {
			dayFrom, dayTo = f.From, f.From
		}
	}
	q := `SELECT start, width, event_id, ` + punctualityColumns + ` FROM punctuality_rollups
		WHERE ((width = 'd' AND start >= ? AND start < ?)
			OR (width = 'h' AND ((start >= ? AND start < ?) OR (start >= ? AND start < ?)))) AND ` + scope.sql + `
		UNION ALL
		SELECT start, 'h' AS width, event_id, ` + punctualityColumns + ` FROM punctuality_fresh
		WHERE start >= ? AND start < ? AND ` + scope.sql
	args := []any{s.ts(dayFrom), s.ts(dayTo), s.ts(f.From), s.ts(dayFrom), s.ts(dayTo), s.ts(f.To)}
	args = append(args, scope.args...)
	args = append(args, s.ts(f.From), s.ts(f.To))
	args = append(args, scope.args...)
	if f.Raw {
		if err := s.punctualityRaw(ctx, f, count); err != nil {
			return nil, nil, err
		}
	} else if err := s.readPunctualityRows(ctx, q, args, byEvent, byStep, f.TrendStep); err != nil {
		return nil, nil, err
	}
	// The due instants that have not ended, from the live rows: waiting and
	// held apart, each through the partial index on exactly its states.
	hour := s.hourOf("scheduled_at")
	var pending []struct {
		Start   rollupInstant `db:"start"`
		EventID string        `db:"event_id"`
		N       int           `db:"n"`
	}
	until := f.To
	if f.Now.Before(until) {
		until = f.Now
	}
	var args2 []any
	for range 2 {
		args2 = append(append(args2, s.ts(f.From), s.ts(until)), scope.args...)
	}
	if err := s.selectAll(ctx, &pending, statusSQL(`SELECT `+hour+` AS start, event_id, COUNT(*) AS n FROM occurrences
		WHERE status IN {waiting} AND scheduled_at >= ? AND scheduled_at <= ? AND `+scope.sql+` GROUP BY 1, 2
		UNION ALL
		SELECT `+hour+` AS start, event_id, COUNT(*) AS n FROM occurrences
		WHERE status IN {held} AND scheduled_at >= ? AND scheduled_at <= ? AND `+scope.sql+` GROUP BY 1, 2`),
		args2...); err != nil {
		return nil, nil, fmt.Errorf("read pending instants: %w", err)
	}
	for _, p := range pending {
		count(p.EventID, p.Start.Time, &punctualityCounts{pending: p.N})
	}
	return byEvent, byStep, nil
}

// readPunctualityRows adds the rollup rows q selects to their events and
// trend steps. Scanned by hand and each histogram decoded once: a month's
// report reads a row per event and day.
func (s *Store) readPunctualityRows(ctx context.Context, q string, args []any,
	byEvent map[string]*punctualityCounts, byStep map[time.Time]*punctualityCounts, step time.Duration) error {
	rows, err := s.q.QueryContext(ctx, s.d.rebind(q), args...)
	if err := s.note(err, false); err != nil {
		return fmt.Errorf("read punctuality rollups: %w", err)
	}
	defer rows.Close()
	var (
		start                 rollupInstant
		width, event, text    string
		c                     punctualityCounts
		items                 []latenessItem
		lastEvent             string
		eventCounts, stepSums *punctualityCounts
		lastStep              time.Time
	)
	for rows.Next() {
		if err := rows.Scan(&start, &width, &event, &c.completed, &c.failed, &c.missed, &c.skipped, &c.cancelled,
			&text); err != nil {
			return fmt.Errorf("read punctuality rollups: %w", err)
		}
		if items, err = decodeLateness(text, items[:0]); err != nil {
			return err
		}
		if eventCounts == nil || event != lastEvent {
			if eventCounts = byEvent[event]; eventCounts == nil {
				eventCounts = &punctualityCounts{}
				byEvent[event] = eventCounts
			}
			lastEvent = event
		}
		if at := start.Time.Truncate(step); stepSums == nil || !at.Equal(lastStep) {
			if stepSums = byStep[at]; stepSums == nil {
				stepSums = &punctualityCounts{}
				byStep[at] = stepSums
			}
			lastStep = at
		}
		for _, into := range [2]*punctualityCounts{eventCounts, stepSums} {
			into.add(&c)
			for _, it := range items {
				into.late(it.index, it.n)
			}
		}
	}
	return s.note(rows.Err(), false)
}

// hourOf is the SQL of a column's instant truncated to its UTC hour.
func (s *Store) hourOf(column string) string {
	if s.d.backend == Postgres {
		return `date_trunc('hour', ` + column + ` AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`
	}
	return `substr(` + column + `, 1, 13) || ':00:00.000000Z'`
}

// punctualityRaw counts the window's finished instants and first scheduled
// attempts from the history's rows (the reference for the rollups).
func (s *Store) punctualityRaw(ctx context.Context, f model.PunctualityFilter,
	count func(event string, at time.Time, c *punctualityCounts)) error {
	occScope, _ := s.punctualityScope("event_id", f)
	var finished []struct {
		Start   rollupInstant `db:"start"`
		EventID string        `db:"event_id"`
		Status  string        `db:"status"`
		N       int           `db:"n"`
	}
	if err := s.selectAll(ctx, &finished, statusSQL(`SELECT `+s.hourOf("scheduled_at")+` AS start, event_id, status,
		COUNT(*) AS n FROM occurrences WHERE status IN {finished} AND scheduled_at >= ? AND scheduled_at < ? AND `+
		occScope.sql+` GROUP BY 1, 2, 3`), append([]any{s.ts(f.From), s.ts(f.To)}, occScope.args...)...); err != nil {
		return fmt.Errorf("count finished instants: %w", err)
	}
	for _, r := range finished {
		c := &punctualityCounts{}
		c.status(r.Status, r.N)
		count(r.EventID, r.Start.Time, c)
	}
	attScope, _ := s.punctualityScope("a.event_id", f)
	var firsts []struct {
		Start    rollupInstant `db:"start"`
		EventID  string        `db:"event_id"`
		Lateness int64         `db:"lateness_ms"`
		N        int           `db:"n"`
	}
	if err := s.selectAll(ctx, &firsts, `SELECT `+s.hourOf("o.scheduled_at")+` AS start, a.event_id, a.lateness_ms,
		COUNT(*) AS n FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id
		WHERE a.attempt = 1 AND NOT a.manual AND o.scheduled_at >= ? AND o.scheduled_at < ? AND `+attScope.sql+`
		GROUP BY 1, 2, 3`, append([]any{s.ts(f.From), s.ts(f.To)}, attScope.args...)...); err != nil {
		return fmt.Errorf("count first attempts: %w", err)
	}
	for _, r := range firsts {
		c := &punctualityCounts{}
		c.late(punctualityIndex(r.Lateness), r.N)
		count(r.EventID, r.Start.Time, c)
	}
	return nil
}

// punctualityGroup is one group of a report being built.
type punctualityGroup struct {
	key    *string
	name   string
	counts *punctualityCounts
}

// punctualityGroups groups the events' figures by f.GroupBy, naming each
// group from the events' (and endpoints') current rows.
func (s *Store) punctualityGroups(ctx context.Context, f model.PunctualityFilter,
	byEvent map[string]*punctualityCounts) ([]*punctualityGroup, error) {
	ids := make([]string, 0, len(byEvent))
	for id := range byEvent {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	type eventInfo struct {
		ID       string  `db:"id"`
		Name     string  `db:"name"`
		Endpoint *string `db:"endpoint_id"`
	}
	events := make(map[string]eventInfo, len(ids))
	tags := map[string][]string{}
	for start := 0; start < len(ids); start += insertBatch {
		chunk := stringArgs(ids[start:min(start+insertBatch, len(ids))])
		var rows []eventInfo
		if err := s.selectAll(ctx, &rows, `SELECT id, name, endpoint_id FROM events WHERE id IN (`+
			placeholders(len(chunk))+`)`, chunk...); err != nil {
			return nil, fmt.Errorf("read events of the punctuality report: %w", err)
		}
		for _, r := range rows {
			events[r.ID] = r
		}
		if f.GroupBy == model.PunctualityByTag {
			var pairs []struct {
				EventID string `db:"event_id"`
				Tag     string `db:"tag"`
			}
			if err := s.selectAll(ctx, &pairs, `SELECT event_id, tag FROM event_tags WHERE event_id IN (`+
				placeholders(len(chunk))+`)`, chunk...); err != nil {
				return nil, fmt.Errorf("read tags of the punctuality report: %w", err)
			}
			for _, p := range pairs {
				tags[p.EventID] = append(tags[p.EventID], p.Tag)
			}
		}
	}
	endpointNames := map[string]string{}
	if f.GroupBy == model.PunctualityByEndpoint {
		seen := map[string]bool{}
		var eps []string
		for _, e := range events {
			if e.Endpoint != nil && !seen[*e.Endpoint] {
				seen[*e.Endpoint] = true
				eps = append(eps, *e.Endpoint)
			}
		}
		for start := 0; start < len(eps); start += insertBatch {
			chunk := stringArgs(eps[start:min(start+insertBatch, len(eps))])
			var rows []struct {
				ID   string `db:"id"`
				Name string `db:"name"`
			}
			if err := s.selectAll(ctx, &rows, `SELECT id, name FROM endpoints WHERE id IN (`+
				placeholders(len(chunk))+`)`, chunk...); err != nil {
				return nil, fmt.Errorf("read endpoints of the punctuality report: %w", err)
			}
			for _, r := range rows {
				endpointNames[r.ID] = r.Name
			}
		}
	}
	wanted := map[string]bool{}
	for _, t := range f.Tags {
		wanted[t] = true
	}
	groups := map[string]*punctualityGroup{}
	into := func(key *string, name string, c *punctualityCounts) {
		k := "\x00"
		if key != nil {
			k = *key
		}
		g := groups[k]
		if g == nil {
			g = &punctualityGroup{key: key, name: name, counts: &punctualityCounts{}}
			groups[k] = g
		}
		g.counts.add(c)
	}
	for _, id := range ids {
		c, e := byEvent[id], events[id]
		switch f.GroupBy {
		case model.PunctualityByEndpoint:
			if e.Endpoint == nil {
				into(nil, "(no endpoint)", c)
				continue
			}
			name := endpointNames[*e.Endpoint]
			if name == "" {
				name = *e.Endpoint
			}
			into(e.Endpoint, name, c)
		case model.PunctualityByTag:
			matched := false
			for _, t := range tags[id] {
				if len(wanted) == 0 || wanted[t] {
					into(&t, t, c)
					matched = true
				}
			}
			if !matched && len(tags[id]) == 0 {
				into(nil, "(untagged)", c)
			}
		default:
			name := e.Name
			if e.ID == "" {
				name = "(deleted event " + id + ")"
			}
			into(&id, name, c)
		}
	}
	out := make([]*punctualityGroup, 0, len(groups))
	for _, g := range groups {
		out = append(out, g)
	}
	return out, nil
}

// punctualityFigures turns summed counts into a report's figures: on time
// is less than tolerance (a bucket bound) late.
func punctualityFigures(c *punctualityCounts, toleranceMS int64) model.PunctualityCounts {
	out := model.PunctualityCounts{Completed: c.completed, Failed: c.failed, Missed: c.missed, Skipped: c.skipped,
		Cancelled: c.cancelled, Pending: c.pending}
	out.Due = c.completed + c.failed + c.missed + c.skipped + c.cancelled + c.pending
	if c.lateness != nil {
		for i, n := range c.lateness {
			if punctualityBounds[i] < toleranceMS {
				out.OnTime += n
			} else {
				out.Late += n
			}
		}
	}
	out.LatenessMS = c.lateness.percentiles()
	out.SuccessRatio = ratio(c.completed, c.completed+c.failed)
	out.OnTimeRatio = ratio(out.OnTime, out.OnTime+out.Late)
	return out
}

func ratio(n, of int) *float64 {
	if of <= 0 {
		return nil
	}
	r := float64(n) / float64(of)
	return &r
}
