package events

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/input"
)

func TestDebounceFireAt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := t0.Add(d); return &v }
	d := Debounce{Window: time.Hour, MaxWait: 3 * time.Hour}
	for _, tc := range []struct {
		name             string
		since, pending   *time.Time
		now              time.Time
		wantFire, wantAt time.Time
	}{
		{"first upsert begins a burst", nil, nil, t0, t0.Add(time.Hour), t0},
		{"inside the burst: debounce after it", at(0), at(time.Hour), t0.Add(30 * time.Minute), t0.Add(90 * time.Minute), t0},
		{"max_wait bounds the push", at(0), at(2*time.Hour + 50*time.Minute), t0.Add(2*time.Hour + 30*time.Minute), t0.Add(3 * time.Hour), t0},
		{"fired: a new burst", at(0), at(time.Hour), t0.Add(2 * time.Hour), t0.Add(3 * time.Hour), t0.Add(2 * time.Hour)},
		{"nothing pending: a new burst", at(0), nil, t0.Add(10 * time.Minute), t0.Add(70 * time.Minute), t0.Add(10 * time.Minute)},
	} {
		fire, burst := d.FireAt(tc.since, tc.pending, tc.now)
		if !fire.Equal(tc.wantFire) || !burst.Equal(tc.wantAt) {
			t.Errorf("%s: got fire %s burst %s, want %s %s", tc.name, fire, burst, tc.wantFire, tc.wantAt)
		}
	}
	unbounded := Debounce{Window: time.Hour}
	if fire, _ := unbounded.FireAt(at(0), at(time.Hour), t0.Add(10*time.Hour-time.Minute)); !fire.Equal(t0.Add(11*time.Hour - time.Minute)) {
		t.Errorf("without max_wait: got %s", fire)
	}
}

func TestKeyAndDebounceRefusalsNameTheField(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", strings.Repeat("k", MaxKeyLength+1), "a b", "a/b", "é", ".", ".."} {
		var ie *input.Error
		if err := CheckKey(key); !errors.As(err, &ie) || ie.Field != "key" {
			t.Errorf("key %q: got %v, want a refusal naming key", key, err)
		}
	}
	if err := CheckKey("cart:user-42@shop_1.eu"); err != nil || CheckKey("...") != nil {
		t.Errorf("a valid key refused: %v", err)
	}
	for body, field := range map[string]string{
		`{"debounce":"1h","start_time":"in 1 hour"}`: "start_time",
		`{"debounce":"1h","rrule":"FREQ=DAILY"}`:     "rrule",
		`{"debounce":"1h","max_wait":"10m"}`:         "max_wait",
		`{"max_wait":"10m"}`:                         "max_wait",
		`{"debounce":"500ms"}`:                       "debounce",
		`{"debounce":5}`:                             "debounce",
	} {
		var members map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &members); err != nil {
			t.Fatal(err)
		}
		_, err := DecodeDebounce(members)
		var ie *input.Error
		if !errors.As(err, &ie) || ie.Field != field {
			t.Errorf("%s: got %v, want a refusal naming %s", body, err, field)
		}
	}
}
