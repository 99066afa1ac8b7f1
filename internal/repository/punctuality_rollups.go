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
	case model.OccurrenceFailed, model.OccurrenceTimedOut: // a run that timed out failed
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
	var items []latenessItem
	for i, n := range h {
		if n != 0 {
			items = append(items, latenessItem{i, n})
		}
	}
	return encodeLatenessItems(items)
}

// encodeLatenessItems writes buckets, in index order, as encodeLateness
// does.
func encodeLatenessItems(items []latenessItem) string {
	var sb strings.Builder
	for _, it := range items {
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.FormatInt(punctualityBounds[it.index], 10))
		sb.WriteByte(':')
		sb.WriteString(strconv.Itoa(it.n))
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

// punctualityKey names an event's hour (or day) in the rollups. once marks
// a one-time event's delivery: its counts go to a row of punctuality_once
// (its hour, which the report reads for days too), not to an hour and a
// day row.
type punctualityKey struct {
	start time.Time
	event string
	once  bool
}

// punctualityDelta is what one outcome transaction adds to an event's hour:
// a few instants, so its lateness is a short list by bucket index rather
// than the report's histogram (208 counters; one per event and batch was
// 5 % of the server's allocations in a burst).
type punctualityDelta struct {
	punctualityCounts // statuses only: lateness stays nil
	lateness          []latenessItem
}

// late counts n (> 0) first attempts in bucket i.
func (d *punctualityDelta) late(i, n int) {
	for k := range d.lateness {
		if d.lateness[k].index == i {
			d.lateness[k].n += n
			return
		}
	}
	d.lateness = append(d.lateness, latenessItem{i, n})
}

func (d *punctualityDelta) empty() bool {
	return d.punctualityCounts.empty() && len(d.lateness) == 0
}

// encodedLateness is the delta's lateness as encodeLateness writes it.
func (d *punctualityDelta) encodedLateness() string {
	sort.Slice(d.lateness, func(a, b int) bool { return d.lateness[a].index < d.lateness[b].index })
	return encodeLatenessItems(d.lateness)
}

// punctualityDeltas sums a transaction's rollup deltas per event and hour
// of the scheduled instant. Deltas whose event is gone still count: the
// report keeps a deleted event's past.
func punctualityDeltas(d *rollupDeltas) map[punctualityKey]*punctualityDelta {
	out := map[punctualityKey]*punctualityDelta{}
	at := func(event string, t time.Time) *punctualityDelta {
		k := punctualityKey{t.UTC().Truncate(time.Hour), event, d.oneTime[event]}
		c := out[k]
		if c == nil {
			c = &punctualityDelta{}
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

// addPunctualityFresh appends the rows of a transaction's deltas on SQLite:
// a recurring event's to the fresh rows, which the compactor folds, a
// one-time event's to punctuality_once (PostgreSQL writes both in
// insertRollupArrays' statement).
func (s *Store) addPunctualityFresh(ctx context.Context, rows map[punctualityKey]*punctualityDelta) error {
	for _, table := range [2]string{"punctuality_fresh", "punctuality_once"} {
		var keys []punctualityKey
		for k := range rows {
			if k.once == (table == "punctuality_once") {
				keys = append(keys, k)
			}
		}
		const width = 8
		const row = "(?, ?, ?, ?, ?, ?, ?, ?), "
		start := 0
		for _, size := range preparedChunks(len(keys), 128) {
			chunk := keys[start : start+size]
			start += size
			args := make([]any, 0, width*len(chunk))
			for _, k := range chunk {
				c := rows[k]
				args = append(args, s.ts(k.start), k.event, c.completed, c.failed, c.missed, c.skipped, c.cancelled,
					c.encodedLateness())
			}
			q := `INSERT INTO ` + table + ` (start, event_id, ` + punctualityColumns + `) VALUES ` +
				strings.TrimSuffix(strings.Repeat(row, len(chunk)), ", ")
			if _, err := s.execHot(ctx, q, args...); err != nil {
				return fmt.Errorf("add punctuality: %w", err)
			}
		}
	}
	return nil
}

// punctualityArrays are the rows of keys with the given once as one array
// per column, for PostgreSQL's one-statement rollup insert (sorted, so
// that a batch's rows lie in the order of the start index).
func punctualityArrays(rows map[punctualityKey]*punctualityDelta, once bool) []any {
	keys := make([]punctualityKey, 0, len(rows))
	for k := range rows {
		if k.once == once {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(a, b int) bool {
		if !keys[a].start.Equal(keys[b].start) {
			return keys[a].start.Before(keys[b].start)
		}
		return keys[a].event < keys[b].event
	})
	n := len(keys)
	starts, events, lateness := make([]time.Time, 0, n), make([]string, 0, n), make([]string, 0, n)
	cols := [5][]int64{}
	for _, k := range keys {
		c := rows[k]
		starts, events, lateness = append(starts, k.start.UTC()), append(events, k.event),
			append(lateness, c.encodedLateness())
		for i, v := range []int{c.completed, c.failed, c.missed, c.skipped, c.cancelled} {
			cols[i] = append(cols[i], int64(v))
		}
	}
	for i := range cols {
		if cols[i] == nil {
			cols[i] = []int64{}
		}
	}
	return []any{starts, uuidArray(events), cols[0], cols[1], cols[2], cols[3], cols[4], lateness}
}

// compactPunctuality folds up to limit fresh punctuality rows into the
// hour and day rows of their events and returns how many rows it wrote.
// One compactor at a time on PostgreSQL (an advisory lock; another instance
// skips its turn): the merge reads and rewrites rows. PostgreSQL folds in
// one statement (punctualityFold); SQLite, whose fresh rows are few (it has
// one writer and its outcome batches are large), merges them here.
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
			// Run as written: $1 is already PostgreSQL's placeholder.
			res, err := tx.q.ExecContext(ctx, punctualityFold, limit)
			if err := tx.note(err, true); err != nil {
				return fmt.Errorf("fold fresh punctuality rows: %w", err)
			}
			n, _ := res.RowsAffected()
			written = int(n)
			return nil
		}
		var fresh []punctualityRow
		q := `DELETE FROM punctuality_fresh WHERE ` + tx.d.inPick(tx.d.rowID,
			`SELECT `+tx.d.rowID+` FROM punctuality_fresh LIMIT ?`) +
			` RETURNING start, width, event_id, ` + punctualityColumns
		if err := tx.selectAll(ctx, &fresh, q, limit); err != nil {
			return fmt.Errorf("take fresh punctuality rows: %w", err)
		}
		if len(fresh) == 0 {
			return nil
		}
		merged := map[punctualityWideKey]*punctualityCounts{}
		for i := range fresh {
			r := &fresh[i]
			c, err := r.counts()
			if err != nil {
				return err
			}
			hour := r.Start.Time
			keys := []punctualityWideKey{{"h", punctualityKey{start: hour, event: r.EventID}},
				{"d", punctualityKey{start: hour.Truncate(24 * time.Hour), event: r.EventID}}}
			for _, k := range keys {
				if merged[k] == nil {
					merged[k] = &punctualityCounts{}
				}
				merged[k].add(c)
			}
		}
		keys := make([]punctualityWideKey, 0, len(merged))
		for k := range merged {
			keys = append(keys, k)
		}
		old, err := tx.readPunctualityRollups(ctx, keys)
		if err != nil {
			return err
		}
		for i := range old {
			r := &old[i]
			c, err := r.counts()
			if err != nil {
				return err
			}
			merged[punctualityWideKey{strings.TrimSpace(r.Width), punctualityKey{start: r.Start.Time, event: r.EventID}}].add(c)
		}
		if err := tx.writePunctualityRollups(ctx, merged); err != nil {
			return err
		}
		written = len(merged)
		return nil
	})
	return written, err
}

// punctualityFold is PostgreSQL's compaction of the punctuality rollups in
// one statement (migration 0024): a bounded batch of fresh rows is deleted
// and added to the hour and day rows of their events (epoch arithmetic:
// UTC days, as time.Truncate). The fresh rows a batch deletes are the ones
// it adds, so a concurrent writer's new rows are neither lost nor counted
// twice. Before it the compactor read the fresh rows and the rollup rows of
// their keys into the process and wrote the merge back: two more round
// trips carrying every one-time event's delivery (#36).
const punctualityFold = `WITH fresh AS (DELETE FROM punctuality_fresh WHERE ctid = ANY(ARRAY(
		SELECT ctid FROM punctuality_fresh LIMIT $1))
		RETURNING start, event_id, completed, failed, missed, skipped, cancelled, lateness),
	spread AS (SELECT 'h' AS width, start, event_id, completed, failed, missed, skipped, cancelled, lateness FROM fresh
		UNION ALL
		SELECT 'd', to_timestamp(floor(extract(epoch FROM start) / 86400) * 86400), event_id, completed, failed,
			missed, skipped, cancelled, lateness FROM fresh)
	INSERT INTO punctuality_rollups AS r (width, start, event_id, ` + punctualityColumns + `)
	SELECT width, start, event_id, SUM(completed), SUM(failed), SUM(missed), SUM(skipped), SUM(cancelled),
		CASE WHEN COUNT(NULLIF(lateness, '')) > 1 THEN qhronos_lateness_norm(string_agg(lateness, ','))
			ELSE COALESCE(MAX(NULLIF(lateness, '')), '') END
	FROM spread GROUP BY 1, 2, 3 ORDER BY 1, 2, 3` + punctualityAdd

// punctualityAdd ends an insert into punctuality_rollups (named r) on
// PostgreSQL: the inserted figures are added to the row's.
const punctualityAdd = `
	ON CONFLICT (width, start, event_id) DO UPDATE SET completed = r.completed + excluded.completed,
		failed = r.failed + excluded.failed, missed = r.missed + excluded.missed,
		skipped = r.skipped + excluded.skipped, cancelled = r.cancelled + excluded.cancelled,
		lateness = CASE WHEN r.lateness = '' THEN excluded.lateness WHEN excluded.lateness = '' THEN r.lateness
			ELSE qhronos_lateness_norm(r.lateness || ',' || excluded.lateness) END`

// punctualityWideKey names a punctuality rollup row: its width ("h", "d" or
// "o") and its event's hour or day.
type punctualityWideKey struct {
	width string
	punctualityKey
}

// readPunctualityRollups reads the rollup rows of keys by exact key (primary
// key probes; SQLite's compaction).
func (s *Store) readPunctualityRollups(ctx context.Context, keys []punctualityWideKey) ([]punctualityRow, error) {
	var out []punctualityRow
	const cols = `r.start, r.width, r.event_id, `
	const perRead = 300
	for start := 0; start < len(keys); start += perRead {
		chunk := keys[start:min(start+perRead, len(keys))]
		args := make([]any, 0, 3*len(chunk))
		row := s.d.typedRow("text", "timestamptz", "uuid")
		for _, k := range chunk {
			args = append(args, k.width, s.ts(k.start), k.event)
		}
		var rows []punctualityRow
		if err := s.selectAll(ctx, &rows, `WITH k (width, start, event_id) AS (VALUES `+
			strings.TrimSuffix(strings.Repeat(row+", ", len(chunk)), ", ")+`)
			SELECT `+cols+prefixed("r.", punctualityColumns)+`
			FROM punctuality_rollups r JOIN k ON r.width = k.width AND r.start = k.start AND r.event_id = k.event_id`,
			args...); err != nil {
			return nil, fmt.Errorf("read punctuality rollups: %w", err)
		}
		out = append(out, rows...)
	}
	return out, nil
}

// punctualityUpsert ends the rollup rows' insert: the merged figures replace
// the row's.
const punctualityUpsert = ` ON CONFLICT (width, start, event_id) DO UPDATE SET completed = excluded.completed,
	failed = excluded.failed, missed = excluded.missed, skipped = excluded.skipped,
	cancelled = excluded.cancelled, lateness = excluded.lateness`

// writePunctualityRollups writes the merged rows as VALUES lists (SQLite's
// compaction).
func (s *Store) writePunctualityRollups(ctx context.Context, merged map[punctualityWideKey]*punctualityCounts) error {
	insert := `INSERT INTO punctuality_rollups (width, start, event_id, ` + punctualityColumns + `) `
	var rows [][]any
	for k, c := range merged {
		rows = append(rows, []any{k.width, s.ts(k.start), k.event, c.completed, c.failed, c.missed, c.skipped,
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
		if _, err := s.exec(ctx, insert+`VALUES `+strings.TrimSuffix(strings.Repeat(row+", ", len(chunk)), ", ")+
			punctualityUpsert, args...); err != nil {
			return fmt.Errorf("write punctuality rollups: %w", err)
		}
	}
	return nil
}
