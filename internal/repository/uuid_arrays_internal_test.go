package repository

import (
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/qhronos/qhronos/internal/model"
)

// The hot path's id arrays reach PostgreSQL in pgx's binary format: as
// plain strings they do not (pgx fails, formats the array into an error
// and falls back to text), which is what uuidArray is for.
func TestUUIDArraysEncodeInBinary(t *testing.T) {
	m := pgtype.NewMap()
	typ, ok := m.TypeForName("_uuid")
	if !ok {
		t.Fatal("no uuid[] type")
	}
	id := model.NewID()
	if _, err := m.Encode(typ.OID, pgtype.BinaryFormatCode, []string{id}, nil); err == nil {
		t.Fatal("[]string encodes in binary now: uuidArray may no longer be needed")
	}
	ids := make([]string, 100)
	nullable := make([]*string, 100)
	for i := range ids {
		ids[i] = model.NewID()
		if i%2 == 0 {
			nullable[i] = &ids[i]
		}
	}
	for name, v := range map[string]any{
		"uuidArray":         uuidArray(ids),
		"nullableUUIDArray": nullableUUIDArray(nullable),
		"empty":             uuidArray(nil),
	} {
		if _, err := m.Encode(typ.OID, pgtype.BinaryFormatCode, v, nil); err != nil {
			t.Errorf("%s: binary encoding failed: %v", name, err)
		}
		// A failed attempt on the way (an error per element, formatted)
		// costs four allocations an id: the direct path boxes each once.
		if n := testing.AllocsPerRun(10, func() { _, _ = m.Encode(typ.OID, pgtype.BinaryFormatCode, v, nil) }); n > 200 {
			t.Errorf("%s: encoding 100 ids allocated %.0f times, want pgx's direct binary plan", name, n)
		}
	}
	bad := []string{id, "not-a-uuid"}
	if got, ok := uuidArray(bad).([]string); !ok || len(got) != 2 {
		t.Errorf("an id that does not parse: got %T, want the strings back (PostgreSQL reports it)", uuidArray(bad))
	}
	badp := []*string{&bad[1]}
	if _, ok := nullableUUIDArray(badp).([]*string); !ok {
		t.Errorf("a nullable id that does not parse: got %T, want the strings back", nullableUUIDArray(badp))
	}
}
