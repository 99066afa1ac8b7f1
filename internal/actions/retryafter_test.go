package actions_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/actions"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"120", 2 * time.Minute, true},
		{" 5 ", 5 * time.Second, true},
		{"-5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"99999999999999999999999", 30 * 24 * time.Hour, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"Sunday, 01-Mar-26 12:01:00 GMT", time.Minute, true}, // RFC 850
		{"Sun Mar  1 12:00:30 2026", 30 * time.Second, true},  // asctime
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
	}
	for _, tc := range tests {
		got, ok := actions.ParseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.wantOK)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "Sun, 01 Mar 2026 12:01:00 GMT", "-1", "1e9", "18446744073709551616"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := actions.ParseRetryAfter(v, now)
		if d < 0 || d > 30*24*time.Hour {
			t.Fatalf("ParseRetryAfter(%q) = %s, want within [0, 30d]", v, d)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %s with ok=false", v, d)
		}
	})
}
