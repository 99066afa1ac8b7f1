package repository

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

func newGroupStats() *model.GroupStats {
	return &model.GroupStats{ByStatus: map[model.OccurrenceStatus]int{},
		ByReason: map[model.OccurrenceStatus]map[string]int{}}
}

// Stats computes counts by status and action type, delivery duration and
// lateness percentiles, and the current due and retrying backlog.
//
// Percentiles are computed in the database, identically on both backends:
// ROW_NUMBER() and COUNT(*) windows over the attempts ordered by the value,
// keeping only the rows whose rank is ceil(p × n) for p in {50, 95, 99}. That
// is the nearest-rank definition (an observed value, no interpolation), so
// SQLite (which has no percentile function) and PostgreSQL give the same
// exact answer and no more than three rows per group leave the database.
func (s *Store) Stats(ctx context.Context, f model.StatsFilter) (model.Stats, error) {
	out := model.Stats{Since: f.Since.UTC(), Until: f.Until.UTC(), Total: *newGroupStats(), ByAction: map[string]*model.GroupStats{}}
	scope, ok := s.readScope("o.event_id", f)
	if !ok {
		return out, nil
	}
	group := func(action string) *model.GroupStats {
		if f.TotalOnly {
			return newGroupStats() // counted in Total only
		}
		g := out.ByAction[action]
		if g == nil {
			g = newGroupStats()
			out.ByAction[action] = g
		}
		return g
	}
	if err := s.queueCounts(ctx, f, scope, &out, group); err != nil {
		return model.Stats{}, err
	}
	// Unrestricted reads (the master token, the console's operators) come
	// from the rollups; a tag scope cannot, and reads its events' rows.
	if f.Unrestricted && !f.Raw {
		if err := s.statsFromRollups(ctx, f, &out, group); err != nil {
			return model.Stats{}, err
		}
		return out, nil
	}
	if err := s.statusCounts(ctx, f, scope, &out, group); err != nil {
		return model.Stats{}, err
	}
	attemptScope, _ := s.readScope("a.event_id", f)
	total := func(string) *model.GroupStats { return &out.Total }
	for _, pq := range []percentileQuery{durationQuery, latenessQuery} {
		if !f.TotalOnly {
			byAction := pq
			byAction.byAction = true
			if err := s.attemptPercentiles(ctx, f, attemptScope, byAction, group); err != nil {
				return model.Stats{}, err
			}
		}
		if err := s.attemptPercentiles(ctx, f, attemptScope, pq, total); err != nil {
			return model.Stats{}, err
		}
	}
	return out, nil
}

// sqlPredicate is a WHERE fragment with its arguments.
type sqlPredicate struct {
	sql  string
	args []any
}

// readScope is the read-scope predicate on an event id column; ok is false
// when the scope can match nothing.
func (s *Store) readScope(column string, f model.StatsFilter) (sqlPredicate, bool) {
	if f.Unrestricted {
		return sqlPredicate{sql: "1 = 1"}, true
	}
	if len(f.Scope) == 0 {
		return sqlPredicate{}, false
	}
	return sqlPredicate{
		sql:  `EXISTS (SELECT 1 FROM event_tags t WHERE t.event_id = ` + column + ` AND t.tag IN (` + placeholders(len(f.Scope)) + `))`,
		args: stringArgs(f.Scope),
	}, true
}

// actionColumn is the grouping by action type of an occurrence query and
// the join it needs; without the breakdown there is one group and no join.
func actionColumn(f model.StatsFilter) (column, join string) {
	if f.TotalOnly {
		return "''", ""
	}
	return "e.action_type", "JOIN events e ON e.id = o.event_id"
}

// groupBy is a GROUP BY list without the constant column PostgreSQL
// refuses there.
func groupBy(action string, more ...string) string {
	if action == "''" {
		return strings.Join(more, ", ")
	}
	return strings.Join(append([]string{action}, more...), ", ")
}

func (s *Store) statusCounts(ctx context.Context, f model.StatsFilter, scope sqlPredicate, out *model.Stats, group func(string) *model.GroupStats) error {
	action, join := actionColumn(f)
	q := `SELECT ` + action + ` AS action_type, o.status AS status, COALESCE(o.reason, '') AS reason, COUNT(*) AS n
		FROM occurrences o ` + join + `
		WHERE o.scheduled_at >= ? AND o.scheduled_at < ? AND ` + scope.sql + `
		GROUP BY ` + groupBy(action, "o.status", "COALESCE(o.reason, '')")
	var rows []struct {
		Action string                 `db:"action_type"`
		Status model.OccurrenceStatus `db:"status"`
		Reason string                 `db:"reason"`
		N      int                    `db:"n"`
	}
	args := append([]any{s.ts(f.Since), s.ts(f.Until)}, scope.args...)
	if err := s.selectAll(ctx, &rows, q, args...); err != nil {
		return fmt.Errorf("count occurrences for stats: %w", err)
	}
	for _, r := range rows {
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
	return nil
}

func (s *Store) queueCounts(ctx context.Context, f model.StatsFilter, scope sqlPredicate, out *model.Stats, group func(string) *model.GroupStats) error {
	action, join := actionColumn(f)
	q := `SELECT ` + action + statusSQL(` AS action_type,
		COALESCE(SUM(CASE WHEN o.status = {pending} AND o.next_attempt_at <= ? THEN 1 ELSE 0 END), 0) AS due,
		COALESCE(SUM(CASE WHEN o.status = {retrying} THEN 1 ELSE 0 END), 0) AS retrying
		FROM unfinished_occurrences o `) + join + statusSQL(`
		WHERE o.status IN {waiting} AND `) + scope.sql
	if !f.TotalOnly {
		q += ` GROUP BY ` + action
	}
	var rows []struct {
		Action   string `db:"action_type"`
		Due      int    `db:"due"`
		Retrying int    `db:"retrying"`
	}
	args := append([]any{s.ts(f.Now)}, scope.args...)
	if err := s.selectAll(ctx, &rows, q, args...); err != nil {
		return fmt.Errorf("count queue for stats: %w", err)
	}
	for _, r := range rows {
		if r.Due == 0 && r.Retrying == 0 {
			continue
		}
		g := group(r.Action)
		g.Due, g.Retrying = r.Due, r.Retrying
		out.Total.Due += r.Due
		out.Total.Retrying += r.Retrying
	}
	return nil
}

// percentiles are the reported ones; the nearest rank of p among n values
// is ceil(p × n / 100), computed in integer SQL as (p × n + 99) / 100.
var percentiles = []int{50, 95, 99}

func rankSQL() string {
	parts := make([]string, len(percentiles))
	for i, p := range percentiles {
		parts[i] = fmt.Sprintf("rn = (%d * n + 99) / 100", p)
	}
	return strings.Join(parts, " OR ")
}

// percentileQuery describes one percentile computation over attempts.
type percentileQuery struct {
	value string // column of attempts a
	where string // extra trusted predicate on a
	// byAction groups by the event's action type; otherwise one group "".
	byAction bool
	// counts records the number of values as the attempt count.
	counts bool
	pick   func(g *model.GroupStats) *model.Percentiles
}

// Duration covers every attempt; lateness only first, scheduled attempts, so
// that retry backoff and manual re-deliveries do not pass for late firing.
var (
	durationQuery = percentileQuery{value: "a.duration_ms", where: "1 = 1", counts: true,
		pick: func(g *model.GroupStats) *model.Percentiles { return &g.DurationMS }}
	latenessQuery = percentileQuery{value: "a.lateness_ms", where: "a.attempt = 1 AND a.manual = ?",
		pick: func(g *model.GroupStats) *model.Percentiles { return &g.LatenessMS }}
)

// attemptPercentiles fills one kind of percentiles (and optionally attempt
// counts) per action type or for the total.
func (s *Store) attemptPercentiles(ctx context.Context, f model.StatsFilter, scope sqlPredicate, pq percentileQuery, group func(string) *model.GroupStats) error {
	grp, partition, join := "''", "", ""
	if pq.byAction {
		grp, partition, join = "e.action_type", "PARTITION BY e.action_type ", "JOIN events e ON e.id = a.event_id"
	}
	q := `WITH w AS (SELECT ` + grp + ` AS grp, ` + pq.value + ` AS v,
			ROW_NUMBER() OVER (` + partition + `ORDER BY ` + pq.value + `) AS rn,
			COUNT(*) OVER (` + partition + `) AS n
		FROM attempts a ` + join + `
		WHERE a.started_at >= ? AND a.started_at < ? AND ` + pq.where + ` AND ` + scope.sql + `)
		SELECT grp, v, rn, n FROM w WHERE ` + rankSQL()
	var rows []struct {
		Group string `db:"grp"`
		V     int64  `db:"v"`
		RN    int    `db:"rn"`
		N     int    `db:"n"`
	}
	args := []any{s.ts(f.Since), s.ts(f.Until)}
	if strings.Contains(pq.where, "?") {
		args = append(args, false)
	}
	args = append(args, scope.args...)
	if err := s.selectAll(ctx, &rows, q, args...); err != nil {
		return fmt.Errorf("attempt percentiles for stats: %w", err)
	}
	for _, r := range rows {
		g := group(r.Group)
		ps := pq.pick(g)
		ps.Count = r.N
		if pq.counts {
			g.Attempts = r.N
		}
		for _, p := range percentiles {
			if r.RN == (p*r.N+99)/100 {
				setPercentile(ps, p, r.V)
			}
		}
	}
	return nil
}

func setPercentile(ps *model.Percentiles, p int, v int64) {
	switch p {
	case 50:
		ps.P50 = v
	case 95:
		ps.P95 = v
	case 99:
		ps.P99 = v
	}
}

// QueueDepth counts occurrences due now (pending with next_attempt_at <=
// now) and retrying, unscoped: the metrics collector's cheap query.
func (s *Store) QueueDepth(ctx context.Context, now time.Time) (due, retrying int, err error) {
	var row struct {
		Due      *int `db:"due"`
		Retrying *int `db:"retrying"`
	}
	err = s.get(ctx, &row, statusSQL(`SELECT
		SUM(CASE WHEN status = {pending} AND next_attempt_at <= ? THEN 1 ELSE 0 END) AS due,
		SUM(CASE WHEN status = {retrying} THEN 1 ELSE 0 END) AS retrying
		FROM unfinished_occurrences WHERE status IN {waiting}`), s.ts(now))
	if err != nil {
		return 0, 0, fmt.Errorf("queue depth: %w", err)
	}
	if row.Due != nil {
		due = *row.Due
	}
	if row.Retrying != nil {
		retrying = *row.Retrying
	}
	return due, retrying, nil
}

// CountWaiting counts the occurrences still to be worked on, per status
// (pending, dispatching, retrying, awaiting_ack, running): the queue of /status. The
// states are literals, so the partial indexes on exactly those states serve
// the count and the finished history is never scanned.
func (s *Store) CountWaiting(ctx context.Context) (map[model.OccurrenceStatus]int, error) {
	var rows []struct {
		Status model.OccurrenceStatus `db:"status"`
		N      int                    `db:"n"`
	}
	err := s.selectAll(ctx, &rows, statusSQL(`SELECT status, COUNT(*) AS n FROM unfinished_occurrences
		GROUP BY status`))
	if err != nil {
		return nil, fmt.Errorf("count waiting occurrences: %w", err)
	}
	out := make(map[model.OccurrenceStatus]int, len(rows))
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}

// EndedCount is how many rows ended in Status for Reason.
type EndedCount struct {
	Status model.OccurrenceStatus `db:"status"`
	Reason string                 `db:"reason"`
	N      int                    `db:"n"`
}

// EndedAhead counts the rows whose instant lies in (from, to] and that were
// decided before it (skipped or cancelled with a reason, last changed before
// their instant), by status and reason.
func (s *Store) EndedAhead(ctx context.Context, from, to time.Time) ([]EndedCount, error) {
	var out []EndedCount
	err := s.selectAll(ctx, &out, statusSQL(`SELECT status, reason, COUNT(*) AS n FROM ended_occurrences
		WHERE scheduled_at > ? AND scheduled_at <= ? AND status IN ({skipped}, {cancelled}) AND reason IS NOT NULL
		AND updated_at < scheduled_at GROUP BY status, reason`), s.ts(from), s.ts(to))
	if err != nil {
		return nil, fmt.Errorf("tally ended occurrences: %w", err)
	}
	return out, nil
}
