package recurrence

import "time"

// onceSource is a one-time event: its only instant is the start time.
type onceSource struct{ at time.Time }

func (s onceSource) expand(from, to time.Time, limit int, _ *budget) ([]time.Time, error) {
	if s.at.Before(from) || !s.at.Before(to) || limit < 1 {
		return nil, nil
	}
	return []time.Time{s.at}, nil
}
