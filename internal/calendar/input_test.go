package calendar_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

// validate decodes and validates a JSON body as the API does.
func validate(body string) (model.Calendar, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &members); err != nil {
		return model.Calendar{}, input.BadRequest("body", "invalid JSON")
	}
	in, err := calendar.Decode(members)
	if err != nil {
		return model.Calendar{}, err
	}
	return calendar.Validate(in, recurrence.Limits{})
}

func TestValidateNamesTheField(t *testing.T) {
	t.Parallel()
	many := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	tests := []struct {
		body, field string
	}{
		{`{}`, "name"},
		{`{"name":"  "}`, "name"},
		{`{"name":"` + strings.Repeat("n", 256) + `"}`, "name"},
		{`{"name":7}`, "name"},
		{`{"name":"x","colour":"red"}`, "colour"},
		{`{"name":"x","timezone":"Mars/Olympus"}`, "timezone"},
		{`{"name":"x","timezone":"Local"}`, "timezone"},
		{`{"name":"x","dates":"2031-01-01"}`, "dates"},
		{`{"name":"x","dates":["2031-01-01","2031-13-01"]}`, "dates[1]"},
		{`{"name":"x","dates":["2031-02-29"]}`, "dates[0]"},
		{`{"name":"x","dates":["31-01-01"]}`, "dates[0]"},
		{`{"name":"x","dates":` + many(1001, `"2031-01-01"`) + `}`, "dates"},
		{`{"name":"x","ranges":[{"from":"2031-01-01"}]}`, "ranges[0].to"},
		{`{"name":"x","ranges":[{"from":"2031-01-02","to":"2031-01-01"}]}`, "ranges[0].to"},
		{`{"name":"x","ranges":[{"from":"2031-01-01","to":"2031-01-02","by":1}]}`, "ranges"},
		{`{"name":"x","ranges":[{"from":"2020-01-01","to":"2030-01-08"}]}`, "ranges[0]"},
		{`{"name":"x","ranges":` + many(1001, `{"from":"2031-01-01","to":"2031-01-01"}`) + `}`, "ranges"},
		{`{"name":"x","rrules":["FREQ=WEEKLY;BYDAY=XX"]}`, "rrules[0]"},
		{`{"name":"x","rrules":["FREQ=DAILY",""]}`, "rrules[1]"},
		{`{"name":"x","rrules":["DTSTART:20310101T000000Z\nRRULE:FREQ=DAILY"]}`, "rrules[0]"},
		{`{"name":"x","rrules":["FREQ=DAILY;BYMONTHDAY=` + strings.Repeat("1,", 600) + `1"]}`, "rrules[0]"},
		{`{"name":"x","rrules":` + many(21, `"FREQ=DAILY"`) + `}`, "rrules"},
		{`{"name":"x","tags":["a,b"]}`, "tags"},
		{`{"name":"x","tags":[" a"]}`, "tags"},
		{`{"name":"x","tags":` + many(51, `"t"`) + `}`, "tags"},
	}
	for _, tt := range tests {
		_, err := validate(tt.body)
		var inErr *input.Error
		if !errors.As(err, &inErr) {
			t.Errorf("%.80s: error %v, want an *input.Error", tt.body, err)
			continue
		}
		if inErr.Status != http.StatusBadRequest || inErr.Field != tt.field {
			t.Errorf("%.80s: got %d %q (%s), want 400 naming %q", tt.body, inErr.Status, inErr.Field, inErr.Message, tt.field)
		}
	}
}

func TestValidateNormalizes(t *testing.T) {
	t.Parallel()
	got, err := validate(`{"name":" Holidays ","dates":["2031-12-26","2031-12-25","2031-12-26"],
		"tags":["team-a","team-a"],"id":"ignored","version":9,"replan_pending":true}`)
	require.NoError(t, err)
	want := model.Calendar{Name: "Holidays", Timezone: "UTC", Dates: []string{"2031-12-25", "2031-12-26"},
		Ranges: []model.DateRange{}, RRules: []string{}, Tags: []string{"team-a"}}
	require.Equal(t, want, got)
}

// FuzzValidate holds the decoder and validator to their contract on any
// body: no panic; a refusal is a 400 naming a field; an accepted calendar
// compiles, answers Blocks, and validates again to itself. The seeds live
// in testdata/fuzz/FuzzValidate.
func FuzzValidate(f *testing.F) {
	f.Fuzz(func(t *testing.T, body string) {
		got, err := validate(body)
		if err != nil {
			var inErr *input.Error
			if !errors.As(err, &inErr) || inErr.Status != http.StatusBadRequest || inErr.Field == "" {
				t.Fatalf("error %#v is not a 400 naming a field", err)
			}
			return
		}
		c, err := calendar.Compile(got, recurrence.Limits{})
		if err != nil {
			t.Fatalf("accepted calendar does not compile: %v", err)
		}
		for _, at := range []time.Time{time.Date(2031, 3, 8, 12, 0, 0, 0, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC)} {
			c.Blocks(at)
		}
		again, err := json.Marshal(map[string]any{"name": got.Name, "timezone": got.Timezone, "dates": got.Dates,
			"ranges": got.Ranges, "rrules": got.RRules, "tags": got.Tags})
		require.NoError(t, err)
		second, err := validate(string(again))
		if err != nil {
			t.Fatalf("accepted calendar %s is refused the second time: %v", again, err)
		}
		require.Equal(t, got, second)
	})
}
