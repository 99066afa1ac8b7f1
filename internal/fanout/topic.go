// Package fanout holds the pure rules of topics and subscriptions: topic
// names and the patterns subscriptions name them by, the CEL filters that
// choose which firings a subscription receives, and the JSON Schemas a
// topic's payloads follow. No I/O.
package fanout

import (
	"strings"

	"github.com/qhronos/qhronos/internal/input"
)

// MaxTopicName bounds a topic's name (and a subscription's pattern).
const MaxTopicName = 100

// CheckTopicName checks a topic's name: 1 to 100 characters of
// [a-z0-9._-], dot-separated segments none of them empty ("digest.daily").
// field names the member in the error.
func CheckTopicName(field, name string) error {
	return checkSegments(field, name, false)
}

// CheckPattern checks what a subscription names: a topic name, or a glob
// whose segments may each be `*` (exactly one segment: "digest.*" matches
// "digest.daily", not "digest" nor "digest.daily.eu").
func CheckPattern(field, pattern string) error {
	return checkSegments(field, pattern, true)
}

func checkSegments(field, s string, glob bool) error {
	if s == "" || len(s) > MaxTopicName {
		return input.BadRequestf(field, "must be 1 to %d characters", MaxTopicName)
	}
	for _, seg := range strings.Split(s, ".") {
		if seg == "" {
			return input.BadRequest(field, `must be dot-separated segments, none of them empty (such as "digest.daily")`)
		}
		if glob && seg == "*" {
			continue
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
				if glob {
					return input.BadRequest(field, "may hold only a-z 0-9 _ - in dot-separated segments, "+
						"and * as a whole segment")
				}
				return input.BadRequest(field, "may hold only a-z 0-9 _ - in dot-separated segments")
			}
		}
	}
	return nil
}

// IsGlob reports whether a (checked) pattern has a `*` segment.
func IsGlob(pattern string) bool {
	return pattern == "*" || strings.HasPrefix(pattern, "*.") || strings.HasSuffix(pattern, ".*") ||
		strings.Contains(pattern, ".*.")
}

// Matches reports whether a checked pattern names topic: segment by
// segment, `*` standing for any one segment.
func Matches(pattern, topic string) bool {
	for {
		p, prest, pmore := strings.Cut(pattern, ".")
		t, trest, tmore := strings.Cut(topic, ".")
		if p != "*" && p != t || pmore != tmore {
			return false
		}
		if !pmore {
			return true
		}
		pattern, topic = prest, trest
	}
}
