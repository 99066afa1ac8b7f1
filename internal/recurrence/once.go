package recurrence

import "time"

// onceSource is a one-time event: its only instant is the start time, which
// is already an instant, so a DST policy has nothing to act on.
type onceSource struct{ at time.Time }

func (s onceSource) expand(out *series, _ *budget) error {
	if !s.at.Before(out.from) && s.at.Before(out.to) && !out.full() {
		out.push(s.at)
	}
	return nil
}
