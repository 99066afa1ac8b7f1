// Package ownership decides which instance owns which bucket slot and keeps
// this instance's slot leases: it registers the instance as a member of the
// dispatch group, renews the slots it holds, hands over the ones the
// balance gives to another member, and takes the free ones the balance
// gives to it. The database arbitrates every change (repository: a slot is
// taken only once free or expired, under a new epoch); this package only
// proposes. Holds answers, by this process's own clock, whether it may still
// send for a bucket: a process that cannot renew stops sending before its
// lease can have expired anywhere else.
package ownership

import (
	"encoding/binary"
	"hash/fnv"
	"sort"
)

// Assign returns, for each of n slots, the member that should own it. Every
// member gets n/len(members) slots, rounded up or down (balanced), and each
// slot goes to the member that ranks it highest among those with room
// (rendezvous hashing with capacities), so the answer depends only on the set
// of members: every member computes the same one, and a member joining or
// leaving moves few slots besides its own share. members must be non-empty
// and free of duplicates.
func Assign(members []string, n int) []string {
	sorted := append([]string(nil), members...)
	sort.Strings(sorted)
	m := len(sorted)
	// The first n%m members in the order of their total score get one
	// slot more; the others n/m.
	room := make(map[string]int, m)
	for i, id := range sorted {
		room[id] = n / m
		if i < n%m {
			room[id]++
		}
	}
	out := make([]string, n)
	ranked := make([]string, m)
	for slot := range n {
		copy(ranked, sorted)
		sort.SliceStable(ranked, func(i, j int) bool { return score(ranked[i], slot) > score(ranked[j], slot) })
		for _, id := range ranked {
			if room[id] > 0 {
				room[id]--
				out[slot] = id
				break
			}
		}
	}
	return out
}

// score is the rendezvous weight of a member for a slot: FNV-1a of both,
// finished by a 64-bit mixer so that similar instance ids rank unrelated.
func score(member string, slot int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(member))
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(slot))
	_, _ = h.Write(b[:])
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
