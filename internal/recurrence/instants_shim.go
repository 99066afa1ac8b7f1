package recurrence

import "time"

// Instant is replaced by the dst branch (merge: delete this file).
type Instant struct {
	At      time.Time
	Skipped bool
}

// ExpandInstants is replaced by the dst branch (merge: delete this file).
func ExpandInstants(r *Rule, from, to time.Time, limit int) ([]Instant, error) {
	got, err := Expand(r, from, to, limit)
	out := make([]Instant, len(got))
	for i, t := range got {
		out[i] = Instant{At: t}
	}
	return out, err
}
