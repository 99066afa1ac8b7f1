package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The pre-fire read starts early enough to be answered before the instant:
// a database answering in 30 ms has rows read again 60 ms ahead (not the
// 10 ms that put 20–50 ms of lateness on every send of a busy machine), the
// lead follows a slower database within two reads and returns over dozens
// of fast ones, and stays within its bounds either way.
func TestThePreFireReadLeadsByTwiceItsRoundTrip(t *testing.T) {
	var l checkLead
	require.Equal(t, minCheckAhead, l.ahead(), "nothing measured: the shortest lead")
	require.Equal(t, minCheckAhead+freshMargin, l.freshFor())

	for range 3 {
		l.observe(time.Millisecond)
	}
	require.Equal(t, minCheckAhead, l.ahead(), "a fast database keeps the shortest lead")

	l.observe(30 * time.Millisecond)
	l.observe(30 * time.Millisecond)
	require.Greater(t, l.ahead(), 40*time.Millisecond, "two slow answers move the lead most of the way")
	for range 20 {
		l.observe(30 * time.Millisecond)
	}
	require.InDelta(t, float64(60*time.Millisecond), float64(l.ahead()), float64(time.Millisecond))
	require.Equal(t, l.ahead()+freshMargin, l.freshFor(), "a job read again fires on that read")

	l.observe(time.Millisecond)
	require.Greater(t, l.ahead(), 50*time.Millisecond, "one fast answer does not drop the lead")
	for range 60 {
		l.observe(time.Millisecond)
	}
	require.Equal(t, minCheckAhead, l.ahead(), "dozens of fast answers bring it back")

	l.observe(time.Second)
	require.Equal(t, maxCheckAhead, l.ahead(), "never more than the longest lead")

	var stepped checkLead
	for range 20 {
		stepped.observe(-time.Hour)
	}
	require.Equal(t, minCheckAhead, stepped.ahead(), "a clock stepped back reads as an instant answer")
}

// A job fires on its read until freshUntil, and not at that instant.
func TestAJobIsStaleFromItsFreshUntil(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	jb := job{freshUntil: t0}
	require.False(t, stale(&jb, t0.Add(-time.Nanosecond)))
	require.True(t, stale(&jb, t0))
	require.True(t, stale(&jb, t0.Add(time.Millisecond)))
}
