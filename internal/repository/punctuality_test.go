package repository_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// randomPunctualityFilters are windows of whole hours around the random
// history (short ones with an hourly trend, long ones with a daily trend
// and partial days at both ends), each grouping, tolerances on and off the
// histogram's bounds, tag filters and scopes.
func randomPunctualityFilters(rng *rand.Rand, now time.Time) []model.PunctualityFilter {
	var out []model.PunctualityFilter
	for range 12 {
		from := t0.Truncate(time.Hour).Add(-time.Duration(rng.IntN(80)) * time.Hour)
		to := t0.Truncate(time.Hour).Add(time.Duration(1+rng.IntN(80)) * time.Hour)
		f := model.PunctualityFilter{From: from, To: to, Now: now, TrendStep: time.Hour,
			GroupBy:      []model.PunctualityGroupBy{model.PunctualityByEvent, model.PunctualityByEndpoint, model.PunctualityByTag}[rng.IntN(3)],
			Tolerance:    []time.Duration{0, 250 * time.Millisecond, time.Second, 1234 * time.Millisecond, 20 * time.Second}[rng.IntN(5)],
			Unrestricted: true}
		if to.Sub(from) > 48*time.Hour {
			f.TrendStep = 24 * time.Hour
		}
		switch rng.IntN(4) {
		case 0:
			f.Unrestricted, f.Scope = false, []string{"a"}
		case 1:
			f.Tags = []string{"b"}
		}
		out = append(out, f)
	}
	return out
}

// requirePunctualityExact checks reports read from the rollups against the
// same reports recounted from the raw rows.
func requirePunctualityExact(t *testing.T, s *repository.Store, filters []model.PunctualityFilter, when string) {
	t.Helper()
	for _, f := range filters {
		raw := f
		raw.Raw = true
		want, err := s.Punctuality(context.Background(), raw)
		require.NoError(t, err)
		got, err := s.Punctuality(context.Background(), f)
		require.NoError(t, err)
		require.Equal(t, want, got, "%s: %+v", when, f)
	}
}

// TestPunctualityEqualsRawHistory checks the punctuality report from the
// rollups (fresh, compacted, and as migration 0022 backfills an existing
// history) against the raw recount over random history and windows.
func TestPunctualityEqualsRawHistory(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 36))
		now := seedRandomHistory(t, s, rng)
		filters := randomPunctualityFilters(rng, now)
		report, err := s.Punctuality(ctx, model.PunctualityFilter{From: t0.Add(-time.Hour), To: t0.Add(5 * time.Hour),
			Now: now, GroupBy: model.PunctualityByEvent, Tolerance: time.Second, TrendStep: time.Hour, Unrestricted: true})
		require.NoError(t, err)
		require.Len(t, report.Groups, 2, "both events are in the report")
		require.Positive(t, report.Total.Completed)
		require.Positive(t, report.Total.Late)
		requirePunctualityExact(t, s, filters, "fresh and compacted")
		for {
			n, err := s.CompactRollups(ctx, 7)
			require.NoError(t, err)
			if n == 0 {
				break
			}
		}
		// The one-time events' deliveries are in rows of their own, a row a
		// change, which the compactor leaves alone; none of width 'o' is
		// written any more.
		var once, oldOnce int
		require.NoError(t, s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM punctuality_once`).Scan(&once))
		require.Positive(t, once)
		require.NoError(t, s.DB().QueryRowContext(ctx,
			`SELECT COUNT(*) FROM punctuality_rollups WHERE width = 'o'`).Scan(&oldOnce))
		require.Zero(t, oldOnce)
		requirePunctualityExact(t, s, filters, "compacted")

		// Rows of width 'o' that a previous version wrote (before 0039, or
		// during a rolling upgrade) still count, beside punctuality_once.
		moveToOldRows(t, s, false)
		require.NoError(t, s.DB().QueryRowContext(ctx,
			`SELECT COUNT(*) FROM punctuality_rollups WHERE width = 'o'`).Scan(&oldOnce))
		require.Positive(t, oldOnce)
		requirePunctualityExact(t, s, filters, "rows of width 'o' beside punctuality_once")

		// Upgrading to 0039 moves those rows into punctuality_once.
		moveToOldRows(t, s, true)
		for _, q := range []string{`DROP TABLE punctuality_once`, `DELETE FROM schema_migrations WHERE version = 39`} {
			_, err := s.DB().ExecContext(ctx, q)
			require.NoError(t, err)
		}
		applied, err := s.Migrate(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, applied)
		require.NoError(t, s.DB().QueryRowContext(ctx,
			`SELECT COUNT(*) FROM punctuality_rollups WHERE width = 'o'`).Scan(&oldOnce))
		require.Zero(t, oldOnce)
		requirePunctualityExact(t, s, filters, "moved by migration 0039")

		// An installation upgrading to 0022 gets its history counted (all of
		// it, so the rows 0039 made are not there yet).
		for _, q := range []string{`DROP TABLE punctuality_rollups`, `DROP TABLE punctuality_fresh`,
			`DELETE FROM punctuality_once`, `DELETE FROM schema_migrations WHERE version = 22`} {
			_, err := s.DB().ExecContext(ctx, q)
			require.NoError(t, err)
		}
		applied, err = s.Migrate(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, applied)
		requirePunctualityExact(t, s, filters, "backfilled by the migration")
	})
}

// moveToOldRows turns the keys of punctuality_once (every one, or half of
// them) into the row of width 'o' a version before 0039 wrote: one per event
// and hour, its rows summed. The instant is kept as the store's text, so
// that it is written back and matched exactly on SQLite.
func moveToOldRows(t *testing.T, s *repository.Store, every bool) {
	ctx := context.Background()
	rows, err := s.DB().QueryContext(ctx, `SELECT CAST(start AS TEXT), event_id, completed, failed, missed, skipped, cancelled,
		lateness FROM punctuality_once`)
	require.NoError(t, err)
	defer rows.Close()
	type key struct{ start, event string }
	sums := map[key]*[5]int{}
	late := map[key]map[int]int{}
	for rows.Next() {
		var k key
		var c [5]int
		var lateness string
		require.NoError(t, rows.Scan(&k.start, &k.event, &c[0], &c[1], &c[2], &c[3], &c[4], &lateness))
		if sums[k] == nil {
			sums[k], late[k] = &[5]int{}, map[int]int{}
		}
		for i := range c {
			sums[k][i] += c[i]
		}
		for _, item := range strings.Split(lateness, ",") {
			if item == "" {
				continue
			}
			var bucket, n int
			_, err := fmt.Sscanf(item, "%d:%d", &bucket, &n)
			require.NoError(t, err, item)
			late[k][bucket] += n
		}
	}
	require.NoError(t, rows.Err())
	moved := 0
	for k, c := range sums {
		if moved++; !every && moved%2 == 0 {
			continue
		}
		buckets := slices.Sorted(maps.Keys(late[k]))
		items := make([]string, len(buckets))
		for i, b := range buckets {
			items[i] = fmt.Sprintf("%d:%d", b, late[k][b])
		}
		_, err := s.DB().ExecContext(ctx, s.DB().Rebind(`DELETE FROM punctuality_once WHERE start = ? AND event_id = ?`),
			k.start, k.event)
		require.NoError(t, err)
		_, err = s.DB().ExecContext(ctx, s.DB().Rebind(`INSERT INTO punctuality_rollups (width, start, event_id, completed,
			failed, missed, skipped, cancelled, lateness) VALUES ('o', ?, ?, ?, ?, ?, ?, ?, ?)`),
			k.start, k.event, c[0], c[1], c[2], c[3], c[4], strings.Join(items, ","))
		require.NoError(t, err)
	}
}

// TestPunctualityBucket checks the histogram's bounds: exact below 10 ms,
// tolerances people pick exact, monotonic, at most 20 % wide.
func TestPunctualityBucket(t *testing.T) {
	for v, want := range map[int64]int64{-5: 0, 0: 0, 9: 9, 10: 10, 17: 16, 99: 90, 100: 100, 249: 220, 250: 250,
		999: 900, 1000: 1000, 1499: 1400, 1500: 1500, 60_000: 60_000, 1 << 62: 9_000_000_000} {
		require.Equal(t, want, repository.PunctualityBucket(v), "bucket of %d", v)
	}
	prev := int64(0)
	for v := int64(10); v < 10_000_000_000; v += 1 + v/97 {
		b := repository.PunctualityBucket(v)
		require.LessOrEqual(t, b, v)
		require.GreaterOrEqual(t, b, prev)
		require.GreaterOrEqual(t, float64(b), 0.8*float64(v), "bucket of %d", v)
		prev = b
	}
}
