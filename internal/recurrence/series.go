package recurrence

import (
	"slices"
	"time"
)

// series collects the output of one expansion: sorted, unique instants in
// [from, to), at most limit. Expand wants firing instants only (times);
// ExpandInstants wants skipped readings too (all, with skips set). Sources
// append readings in wall-clock order with push; the few a DST policy makes
// out of order wait in held until the stream has passed them.
type series struct {
	from, to time.Time
	limit    int
	skips    bool
	times    []time.Time // when !skips
	all      []Instant   // when skips
	n        int         // instants appended
	last     time.Time   // the last instant appended
	held     []Instant   // sorted by At, unique
	ex       excluder    // drops held instants (EXDATE); nil for none
}

type excluder interface{ excluded(time.Time) bool }

func newSeries(from, to time.Time, limit int, skips bool) series {
	return series{from: from, to: to, limit: limit, skips: skips}
}

func (s *series) full() bool { return s.n >= s.limit }

// push appends t, which the caller has checked is in the window and after
// s.last.
func (s *series) push(t time.Time) {
	if s.skips {
		s.all = append(s.all, Instant{At: t})
	} else {
		s.times = append(s.times, t)
	}
	s.n++
	s.last = t
}

// hold queues an instant that may come after the instants of later readings:
// a gap reading read with the offset before the gap, or the second occurrence
// of a repeated one. At one instant a firing reading wins over a skipped one.
func (s *series) hold(in Instant) {
	i := len(s.held)
	for i > 0 && s.held[i-1].At.After(in.At) {
		i--
	}
	if i > 0 && s.held[i-1].At.Equal(in.At) {
		s.held[i-1].Skipped = s.held[i-1].Skipped && in.Skipped
		return
	}
	s.held = slices.Insert(s.held, i, in)
}

// release appends the held instants before t, which the stream has now
// passed; true means the limit is reached.
func (s *series) release(t time.Time) bool {
	i := 0
	for ; i < len(s.held) && s.held[i].At.Before(t) && !s.full(); i++ {
		in := s.held[i]
		if (in.Skipped && !s.skips) || in.At.Before(s.from) || !in.At.Before(s.to) || (s.ex != nil && s.ex.excluded(in.At)) ||
			(s.n > 0 && !in.At.After(s.last)) {
			continue
		}
		if s.skips {
			s.all = append(s.all, in)
		} else {
			s.times = append(s.times, in.At)
		}
		s.n++
		s.last = in.At
	}
	s.held = s.held[i:]
	return s.full()
}

// taken reports whether a held instant already fires at t, which the stream
// has reached (release(t) came first): a later reading at t is the same
// instant and is dropped. A skipped reading held at t gives way to it.
func (s *series) taken(t time.Time) bool {
	if len(s.held) == 0 || !s.held[0].At.Equal(t) {
		return false
	}
	if s.held[0].Skipped {
		s.held = s.held[1:]
		return false
	}
	return true
}

// merge adds extra firing instants (RDATEs) in the window and restores order,
// uniqueness and the limit.
func (s *series) merge(extra []time.Time) {
	if s.skips {
		for _, t := range extra {
			s.all = append(s.all, Instant{At: t})
		}
		slices.SortFunc(s.all, func(a, b Instant) int {
			if c := a.At.Compare(b.At); c != 0 || a.Skipped == b.Skipped {
				return c
			}
			if a.Skipped {
				return 1 // firing first: CompactFunc keeps it
			}
			return -1
		})
		s.all = slices.CompactFunc(s.all, func(a, b Instant) bool { return a.At.Equal(b.At) })
		s.all = s.all[:min(len(s.all), s.limit)]
		s.n = len(s.all)
		return
	}
	s.times = append(s.times, extra...)
	slices.SortFunc(s.times, func(a, b time.Time) int { return a.Compare(b) })
	s.times = slices.CompactFunc(s.times, time.Time.Equal)
	s.times = s.times[:min(len(s.times), s.limit)]
	s.n = len(s.times)
}
