package main

import (
	"math"
	"slices"
	"time"
)

// Summary describes a set of durations. Percentiles use the nearest-rank
// method: p99 of 100 samples is the 99th smallest, so a reported figure is
// always one that was actually observed.
type Summary struct {
	Count int
	Min   time.Duration
	P50   time.Duration
	P95   time.Duration
	P99   time.Duration
	Max   time.Duration
	Mean  time.Duration
}

// summarize sorts a copy of samples and returns their summary; an empty set
// gives the zero Summary.
func summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum float64
	for _, d := range s {
		sum += float64(d)
	}
	return Summary{
		Count: len(s),
		Min:   s[0],
		P50:   percentile(s, 50),
		P95:   percentile(s, 95),
		P99:   percentile(s, 99),
		Max:   s[len(s)-1],
		Mean:  time.Duration(sum / float64(len(s))),
	}
}

// percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of
// sorted, which must be non-empty and ascending.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}
