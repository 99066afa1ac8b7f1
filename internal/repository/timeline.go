package repository

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// Timeline buckets attempts by start time. The bucket of a row is chosen by
// a CASE over the bucket boundaries, compared as stored instants, so both
// backends compute it the same way without date arithmetic of their own.
func (s *Store) Timeline(ctx context.Context, f model.TimelineFilter) ([]model.TimelineBucket, error) {
	if f.Buckets < 1 || f.Buckets > model.MaxTimelineBuckets || f.Step <= 0 {
		return nil, fmt.Errorf("timeline: %d buckets of %s", f.Buckets, f.Step)
	}
	out := make([]model.TimelineBucket, f.Buckets)
	for i := range out {
		out[i].Start = f.Since.Add(time.Duration(i) * f.Step).UTC()
	}
	scope, ok := s.readScope("a.event_id", model.StatsFilter{Scope: f.Scope, Unrestricted: f.Unrestricted})
	if !ok {
		return out, nil
	}
	// Whole-minute buckets of an unrestricted read come from the rollups.
	if f.Unrestricted && !f.Raw && f.Since.Equal(f.Since.Truncate(time.Minute)) && f.Step%time.Minute == 0 {
		if err := s.timelineFromRollups(ctx, f, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	var bucket strings.Builder
	var bucketArgs []any
	bucket.WriteString("CASE")
	for i := 1; i < f.Buckets; i++ {
		fmt.Fprintf(&bucket, " WHEN a.started_at < ? THEN %d", i-1)
		bucketArgs = append(bucketArgs, s.ts(out[i].Start))
	}
	fmt.Fprintf(&bucket, " ELSE %d END", f.Buckets-1)
	if f.Buckets == 1 {
		// A CASE needs a WHEN: one bucket holds every row.
		bucket.Reset()
		bucket.WriteString("0")
	}
	until := f.Since.Add(time.Duration(f.Buckets) * f.Step)
	window := append(append([]any{}, bucketArgs...), s.ts(f.Since), s.ts(until))
	window = append(window, scope.args...)

	counts := `SELECT ` + bucket.String() + statusSQL(` AS bk, COUNT(*) AS n,
			SUM(CASE WHEN a.outcome IN ({completed}, {running}) THEN 1 ELSE 0 END) AS completed,
			SUM(CASE WHEN a.outcome = {failed} OR a.outcome = {retrying} THEN 1 ELSE 0 END) AS failed
		FROM attempts a
		WHERE a.started_at >= ? AND a.started_at < ? AND `) + scope.sql + `
		GROUP BY bk`
	var rows []struct {
		Bucket    int `db:"bk"`
		N         int `db:"n"`
		Completed int `db:"completed"`
		Failed    int `db:"failed"`
	}
	if err := s.selectAll(ctx, &rows, counts, window...); err != nil {
		return nil, fmt.Errorf("timeline counts: %w", err)
	}
	for _, r := range rows {
		if r.Bucket >= 0 && r.Bucket < len(out) {
			out[r.Bucket].Attempts, out[r.Bucket].Completed, out[r.Bucket].Failed = r.N, r.Completed, r.Failed
		}
	}

	lateness := `WITH b AS (SELECT ` + bucket.String() + ` AS bk, a.lateness_ms AS v
			FROM attempts a
			WHERE a.started_at >= ? AND a.started_at < ? AND a.attempt = 1 AND a.manual = ? AND ` + scope.sql + `),
		w AS (SELECT bk, v, ROW_NUMBER() OVER (PARTITION BY bk ORDER BY v) AS rn,
			COUNT(*) OVER (PARTITION BY bk) AS n FROM b)
		SELECT bk, v, rn, n FROM w WHERE ` + rankSQL()
	largs := append(append([]any{}, bucketArgs...), s.ts(f.Since), s.ts(until), false)
	largs = append(largs, scope.args...)
	var prow []struct {
		Bucket int   `db:"bk"`
		V      int64 `db:"v"`
		RN     int   `db:"rn"`
		N      int   `db:"n"`
	}
	if err := s.selectAll(ctx, &prow, lateness, largs...); err != nil {
		return nil, fmt.Errorf("timeline lateness: %w", err)
	}
	for _, r := range prow {
		if r.Bucket < 0 || r.Bucket >= len(out) {
			continue
		}
		ps := &out[r.Bucket].LatenessMS
		ps.Count = r.N
		for _, p := range percentiles {
			if r.RN == (p*r.N+99)/100 {
				setPercentile(ps, p, r.V)
			}
		}
	}
	return out, nil
}
