package repository

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// uuidArray is ids as a uuid[] argument that pgx sends in binary. Given a
// []string, pgx's binary encoding fails first, formats the whole array into
// the error it then drops (%#v), and sends the array as text for
// PostgreSQL to parse back: 3 % of qhronosd's CPU in a burst, in the
// batches of the hot path (BENCHMARKS.md, "#36: sixth step"). Not as
// []uuid.UUID either: that type is a driver.Valuer, whose string value
// takes the same failing path element by element. pgtype.UUID has pgx's
// direct binary plan: 0.15 µs an id against 1.07 µs as a string. An id
// that does not parse keeps the text path, and PostgreSQL's error for it.
func uuidArray(ids []string) any {
	out := make([]pgtype.UUID, len(ids))
	for i, id := range ids {
		u, err := uuid.Parse(id)
		if err != nil {
			return ids
		}
		out[i] = pgtype.UUID{Bytes: u, Valid: true}
	}
	return pgArray(out)
}

// nullableUUIDArray is uuidArray for ids that may be NULL (nil).
func nullableUUIDArray(ids []*string) any {
	out := make([]pgtype.UUID, len(ids))
	for i, id := range ids {
		if id == nil {
			continue
		}
		u, err := uuid.Parse(*id)
		if err != nil {
			return ids
		}
		out[i] = pgtype.UUID{Bytes: u, Valid: true}
	}
	return pgArray(out)
}

// pgArray passes s to pgx as an array on its direct plan. pgx recognises a
// fixed list of slice types ([]string, []int64, []time.Time…) and sends any
// other ([]*string, []*time.Time, []pgtype.UUID) through a plan that reads
// every element by reflection: 4 % of qhronosd's CPU in a burst
// (BENCHMARKS.md, "#36: eleventh step"). A nil element is NULL.
func pgArray[T any](s []T) pgtype.FlatArray[T] { return s }
