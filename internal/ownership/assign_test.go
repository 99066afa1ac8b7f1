package ownership

import (
	"fmt"
	"testing"

	"github.com/qhronos/qhronos/internal/model"
)

func members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("qhronosd-%d-%x", i, i*7919)
	}
	return out
}

func TestAssignIsBalancedAndTheSameForEveryMember(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 12; n++ {
		ms := members(n)
		got := Assign(ms, model.Slots)
		count := map[string]int{}
		for slot, id := range got {
			if id == "" {
				t.Fatalf("%d members: slot %d has no owner", n, slot)
			}
			count[id]++
		}
		lo, hi := model.Slots, 0
		for _, id := range ms {
			lo, hi = min(lo, count[id]), max(hi, count[id])
		}
		if hi-lo > 1 {
			t.Errorf("%d members: shares from %d to %d slots, want within one", n, lo, hi)
		}
		// Another member, listing the group in another order, agrees.
		rev := append([]string(nil), ms...)
		for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
			rev[i], rev[j] = rev[j], rev[i]
		}
		again := Assign(rev, model.Slots)
		for slot := range got {
			if got[slot] != again[slot] {
				t.Fatalf("%d members: slot %d goes to %s or %s depending on the order", n, slot, got[slot], again[slot])
			}
		}
	}
}

// A member joining takes its share; few slots move between the members that
// were there (each moved slot is a handover: sends of that slot pause).
func TestAssignMovesLittleWhenAMemberJoins(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 8; n++ {
		before := Assign(members(n), model.Slots)
		after := Assign(members(n+1), model.Slots)
		newcomer := members(n + 1)[n]
		moved, toNewcomer := 0, 0
		for slot := range before {
			if before[slot] != after[slot] {
				moved++
				if after[slot] == newcomer {
					toNewcomer++
				}
			}
		}
		share := model.Slots / (n + 1)
		if toNewcomer < share {
			t.Errorf("%d → %d members: the newcomer got %d slots, want at least %d", n, n+1, toNewcomer, share)
		}
		if other := moved - toNewcomer; other > model.Slots/4 {
			t.Errorf("%d → %d members: %d slots moved between members already there, want at most %d",
				n, n+1, other, model.Slots/4)
		}
	}
}
