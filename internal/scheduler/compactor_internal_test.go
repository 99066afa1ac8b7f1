package scheduler

import (
	"context"
	"testing"
	"time"
)

// The rollups' compaction waits while the dispatcher drains a burst, never
// longer than rollupCompactMaxWait, and then folds everything left.
func TestCompactionWaitsForABurst(t *testing.T) {
	now := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	behind := false
	fresh := 0 // fresh rows waiting to be folded
	var rounds int
	c := &compactor{
		behind: func(time.Duration) bool { return behind },
		now:    func() time.Time { return now },
		compact: func(_ context.Context, limit int) (int, error) {
			rounds++
			n := min(fresh, limit)
			fresh -= n
			return n, nil
		},
	}
	run := func() int {
		t.Helper()
		n, err := c.runOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	fresh = 10
	if n := run(); n != 10 || fresh != 0 {
		t.Fatalf("idle dispatcher: folded %d, %d left; want everything folded", n, fresh)
	}

	behind, fresh = true, 3*rollupCompactBatch+7
	for elapsed := time.Duration(0); elapsed < rollupCompactMaxWait; elapsed += rollupCompactInterval {
		now = now.Add(rollupCompactInterval)
		if now.Sub(c.last) >= rollupCompactMaxWait {
			break
		}
		if n := run(); n != 0 {
			t.Fatalf("%s into a burst: folded %d rows; want the compaction to wait", elapsed, n)
		}
	}
	now = now.Add(rollupCompactInterval)
	rounds = 0
	if n := run(); n != 3*rollupCompactBatch+7 || fresh != 0 || rounds != 4 {
		t.Fatalf("burst past the longest wait: folded %d in %d rounds, %d left; want all of them in 4 rounds",
			n, rounds, fresh)
	}

	behind, fresh = false, (rollupCompactRounds+2)*rollupCompactBatch
	if n := run(); n != rollupCompactRounds*rollupCompactBatch {
		t.Fatalf("a huge backlog: folded %d in one run; want at most %d rounds", n, rollupCompactRounds)
	}
}
