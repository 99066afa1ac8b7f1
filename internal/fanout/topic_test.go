package fanout

import (
	"errors"
	"strings"
	"testing"

	"github.com/qhronos/qhronos/internal/input"
)

func TestTopicNamesAndPatterns(t *testing.T) {
	for _, ok := range []string{"digest.daily", "a", "invoice_run-2", "a.b.c"} {
		if err := CheckTopicName("name", ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Digest", "digest..daily", ".digest", "digest.", "digest.*", "a b",
		strings.Repeat("a", MaxTopicName+1), "é"} {
		var ie *input.Error
		if err := CheckTopicName("name", bad); !errors.As(err, &ie) || ie.Field != "name" {
			t.Errorf("%q: got %v, want a 400 naming name", bad, err)
		}
	}
	if err := CheckPattern("topic", "digest.*"); err != nil {
		t.Errorf("a glob refused: %v", err)
	}
	for _, bad := range []string{"digest.d*", "**", "digest.", "*..a"} {
		if err := CheckPattern("topic", bad); err == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}

func TestPatternsMatchSegmentBySegment(t *testing.T) {
	for _, c := range []struct {
		pattern, topic string
		want           bool
	}{
		{"digest.daily", "digest.daily", true},
		{"digest.daily", "digest.weekly", false},
		{"digest.*", "digest.daily", true},
		{"digest.*", "digest", false},
		{"digest.*", "digest.daily.eu", false},
		{"*.daily", "digest.daily", true},
		{"*", "digest", true},
		{"*", "digest.daily", false},
		{"digest.*.eu", "digest.daily.eu", true},
		{"digest.*.eu", "digest.daily.us", false},
		{"digest", "digest.daily", false},
	} {
		if got := Matches(c.pattern, c.topic); got != c.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", c.pattern, c.topic, got, c.want)
		}
		if IsGlob(c.pattern) != strings.Contains(c.pattern, "*") {
			t.Errorf("IsGlob(%q) wrong", c.pattern)
		}
	}
}

func FuzzPatternMatch(f *testing.F) {
	f.Add("digest.*", "digest.daily")
	f.Add("*.*", "a.b")
	f.Fuzz(func(t *testing.T, pattern, topic string) {
		if CheckPattern("topic", pattern) != nil || CheckTopicName("name", topic) != nil {
			return
		}
		got := Matches(pattern, topic)
		if !IsGlob(pattern) && got != (pattern == topic) {
			t.Fatalf("exact pattern %q vs %q: %v", pattern, topic, got)
		}
		if got && strings.Count(pattern, ".") != strings.Count(topic, ".") {
			t.Fatalf("%q matched %q with another segment count", pattern, topic)
		}
	})
}
