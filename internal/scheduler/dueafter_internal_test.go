package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository"
)

// The key a read of due work may start after is kept from one full answer
// to the next read only: any wake-up (a row back to waiting may lie behind
// it), including one while the read was under way, or a change of the
// owned slots or their epochs, makes the next read leave out the rows in
// flight instead.
func TestDueAfterIsForgottenOnAnyWakeOrOwnershipChange(t *testing.T) {
	d := &Dispatcher{}
	owned := map[int]int64{3: 1, 7: 2}
	key := repository.DueKey{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), ID: "b"}

	got, wakes := d.takeDueAfter(owned)
	require.Nil(t, got, "nothing read yet")
	d.keepDueAfter(key, owned, wakes)
	got, wakes = d.takeDueAfter(map[int]int64{3: 1, 7: 2})
	require.Equal(t, &key, got)
	got, _ = d.takeDueAfter(owned)
	require.Nil(t, got, "taken once")

	d.keepDueAfter(key, owned, wakes)
	d.Wake(key.At)
	got, wakes = d.takeDueAfter(owned)
	require.Nil(t, got, "a wake-up after the read")

	d.Wake(key.At) // while the read was under way
	d.keepDueAfter(key, owned, wakes)
	got, wakes = d.takeDueAfter(owned)
	require.Nil(t, got, "a wake-up during the read")

	d.keepDueAfter(key, owned, wakes)
	got, wakes = d.takeDueAfter(map[int]int64{3: 1, 7: 3})
	require.Nil(t, got, "a slot under a new epoch")
	d.keepDueAfter(key, owned, wakes)
	got, _ = d.takeDueAfter(map[int]int64{3: 1, 7: 2, 9: 1})
	require.Nil(t, got, "a slot taken over")
}
