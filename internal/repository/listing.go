package repository

import (
	"context"
	"fmt"
	"strings"

	"github.com/qhronos/qhronos/internal/model"
)

// listSegment is one ordered range of a listing: a plain order is one
// segment, HistoryFirst is two.
type listSegment struct {
	where []string
	args  []any
	asc   bool
}

// occurrenceSegments splits a listing into the segments its order reads in
// turn, with the cursor's keyset predicate applied to the segment it points
// into (earlier segments are skipped).
func (s *Store) occurrenceSegments(f model.OccurrenceFilter) []listSegment {
	var segs []listSegment
	switch f.Order {
	case model.OldestFirst:
		segs = []listSegment{{asc: true}}
	case model.HistoryFirst:
		b := s.ts(f.Boundary)
		segs = []listSegment{
			{where: []string{`o.scheduled_at <= ?`}, args: []any{b}},
			{where: []string{`o.scheduled_at > ?`}, args: []any{b}, asc: true},
		}
		if f.After != nil && f.After.Upcoming {
			segs = segs[1:]
		}
	default:
		segs = []listSegment{{}}
	}
	if f.After != nil {
		at, id := s.ts(f.After.ScheduledAt), f.After.ID
		// The redundant bound lets an index on scheduled_at start at the
		// cursor instead of filtering everything before it.
		if segs[0].asc {
			segs[0].where = append(segs[0].where, `o.scheduled_at >= ?`, `(o.scheduled_at > ? OR (o.scheduled_at = ? AND o.id > ?))`)
		} else {
			segs[0].where = append(segs[0].where, `o.scheduled_at <= ?`, `(o.scheduled_at < ? OR (o.scheduled_at = ? AND o.id < ?))`)
		}
		segs[0].args = append(segs[0].args, at, at, at, id)
	}
	return segs
}

// listOccurrenceRows reads one page of table (occurrences or their archive)
// in f's order: each segment is an index range read in its own direction,
// and a page that ends a segment continues into the next. A page offset
// that skips a whole segment counts that segment's rows (fewer than the
// offset) to know how far into the next one to start.
func listOccurrenceRows[T any](ctx context.Context, s *Store, table, columns string, where []string, args []any,
	f model.OccurrenceFilter) ([]T, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	offset := f.Offset
	var out []T
	segs := s.occurrenceSegments(f)
	for i, seg := range segs {
		w := append(append([]string{}, where...), seg.where...)
		a := append(append([]any{}, args...), seg.args...)
		dir := "DESC"
		if seg.asc {
			dir = "ASC"
		}
		q := `SELECT ` + columns + ` FROM ` + table + ` o WHERE ` + strings.Join(w, " AND ") +
			` ORDER BY o.scheduled_at ` + dir + `, o.id ` + dir + ` LIMIT ? OFFSET ?`
		var rows []T
		if err := s.selectAll(ctx, &rows, q, append(a, limit-len(out), offset)...); err != nil {
			return nil, err
		}
		out = append(out, rows...)
		if len(out) >= limit || i == len(segs)-1 {
			break
		}
		switch {
		case offset == 0:
		case len(rows) > 0:
			offset = 0 // this segment ended inside the page
		default:
			var n int
			if err := s.get(ctx, &n, `SELECT COUNT(*) FROM `+table+` o WHERE `+strings.Join(w, " AND "), a...); err != nil {
				return nil, fmt.Errorf("count segment: %w", err)
			}
			offset = max(0, offset-n)
		}
	}
	return out, nil
}
