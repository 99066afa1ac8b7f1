package repository

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
)

// A listed row's fields must come in its columns' order: a field out of
// place would scan another column's value without an error when the two
// have the same type.
func TestListedFieldsAreInColumnOrder(t *testing.T) {
	var r eventRow
	require.Equal(t, columnsOf(eventColumns), tagsOf(t, &r, r.fields(nil)))
	var o model.Occurrence
	require.Equal(t, columnsOf(occurrenceColumns), tagsOf(t, &o, occurrenceFields(&o, nil)))
	require.Equal(t, columnsOf(dueColumns), tagsOf(t, &o, dueFields(&o, nil)))
	var h heldRow
	require.Equal(t, columnsOf("id, lease_token, scheduled_at, reason, event_id"), // updateOutcomes' RETURNING
		tagsOf(t, &h, h.fields(nil)))
}

func columnsOf(list string) []string {
	var out []string
	for _, c := range strings.Split(list, ",") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// tagsOf names the db tag of the field each pointer points to, in order.
func tagsOf(t *testing.T, row any, fields []any) []string {
	v := reflect.ValueOf(row).Elem()
	byAddr := map[uintptr]string{}
	for i := range v.NumField() {
		byAddr[v.Field(i).Addr().Pointer()] = v.Type().Field(i).Tag.Get("db")
	}
	var out []string
	for _, f := range fields {
		tag, ok := byAddr[reflect.ValueOf(f).Pointer()]
		require.True(t, ok, "a listed field is not one of the row's")
		out = append(out, tag)
	}
	return out
}
