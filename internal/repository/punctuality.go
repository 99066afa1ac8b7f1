package repository

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// Punctuality reports how the instants scheduled in [f.From, f.To) (whole
// hours) went, per group and per trend step: from the rollups (whole days
// from the day rows, the hours around them from the hour rows, what the
// compactor has not folded yet from the fresh rows, a one-time event's
// delivery from its rows in punctuality_once) and, for the instants that
// have not ended, from the live rows.
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
	// A one-time event's rows (punctuality_once, and rollups of width 'o'
	// from before migration 0039) are hours read for days too.
	q := `SELECT start, width, event_id, ` + punctualityColumns + ` FROM punctuality_rollups
		WHERE ((width = 'd' AND start >= ? AND start < ?)
			OR (width = 'h' AND ((start >= ? AND start < ?) OR (start >= ? AND start < ?)))
			OR (width = 'o' AND start >= ? AND start < ?)) AND ` + scope.sql + `
		UNION ALL
		SELECT start, 'h' AS width, event_id, ` + punctualityColumns + ` FROM punctuality_fresh
		WHERE start >= ? AND start < ? AND ` + scope.sql + `
		UNION ALL
		SELECT start, 'o' AS width, event_id, ` + punctualityColumns + ` FROM punctuality_once
		WHERE start >= ? AND start < ? AND ` + scope.sql
	args := []any{s.ts(dayFrom), s.ts(dayTo), s.ts(f.From), s.ts(dayFrom), s.ts(dayTo), s.ts(f.To), s.ts(f.From),
		s.ts(f.To)}
	args = append(args, scope.args...)
	for range 2 {
		args = append(args, s.ts(f.From), s.ts(f.To))
		args = append(args, scope.args...)
	}
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
	if err := s.selectAll(ctx, &pending, statusSQL(`SELECT `+hour+` AS start, event_id, COUNT(*) AS n FROM unfinished_occurrences
		WHERE status IN {waiting} AND scheduled_at >= ? AND scheduled_at <= ? AND `+scope.sql+` GROUP BY 1, 2
		UNION ALL
		SELECT `+hour+` AS start, event_id, COUNT(*) AS n FROM unfinished_occurrences
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
