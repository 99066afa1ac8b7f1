package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository"
)

// The key a read of due work starts after is kept from one read to the
// next while nothing wakes the dispatcher: any wake-up (a row back to
// waiting may lie behind it), including one while the read was under way,
// a change of the owned slots or their epochs, or a max_sleep since the
// chain of reads began with a read from the start makes the next read
// start from the start, leaving out the rows in flight instead.
func TestDueAfterIsForgottenOnAnyWakeOwnershipChangeOrAge(t *testing.T) {
	d := &Dispatcher{cfg: Config{MaxSleep: time.Second}}
	owned := map[int]int64{3: 1, 7: 2}
	key := repository.DueKey{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), ID: "b"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	got, wakes, since := d.takeDueAfter(owned, t0)
	require.Nil(t, got, "nothing read yet")
	require.Equal(t, t0, since, "a read from the start begins a chain")
	d.keepDueAfter(key, owned, wakes, since)
	require.Equal(t, &key, d.peekDueAfter(owned, t0), "peeking leaves it")
	got, wakes, since = d.takeDueAfter(map[int]int64{3: 1, 7: 2}, t0.Add(time.Second/2))
	require.Equal(t, &key, got)
	require.Equal(t, t0, since, "the chain keeps its start")
	got, _, _ = d.takeDueAfter(owned, t0.Add(time.Second/2))
	require.Nil(t, got, "taken once")

	d.keepDueAfter(key, owned, wakes, since)
	got, _, since = d.takeDueAfter(owned, t0.Add(time.Second))
	require.Nil(t, got, "a max_sleep old")
	require.Equal(t, t0.Add(time.Second), since, "a new chain")
	d.keepDueAfter(key, owned, wakes, t0)
	require.Nil(t, d.peekDueAfter(owned, t0.Add(time.Second)), "a max_sleep old")

	d.keepDueAfter(key, owned, wakes, t0)
	d.Wake(key.At)
	got, wakes, _ = d.takeDueAfter(owned, t0)
	require.Nil(t, got, "a wake-up after the read")

	d.Wake(key.At) // while the read was under way
	d.keepDueAfter(key, owned, wakes, t0)
	got, wakes, _ = d.takeDueAfter(owned, t0)
	require.Nil(t, got, "a wake-up during the read")

	d.keepDueAfter(key, owned, wakes, t0)
	require.Nil(t, d.peekDueAfter(map[int]int64{3: 1, 7: 3}, t0), "a slot under a new epoch")
	got, wakes, _ = d.takeDueAfter(map[int]int64{3: 1, 7: 3}, t0)
	require.Nil(t, got, "a slot under a new epoch")
	d.keepDueAfter(key, owned, wakes, t0)
	got, _, _ = d.takeDueAfter(map[int]int64{3: 1, 7: 2, 9: 1}, t0)
	require.Nil(t, got, "a slot taken over")
}
