package main

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func receipt(delivery, event string, lateMS int) Receipt {
	return Receipt{DeliveryID: delivery, EventID: event, ScheduledAt: t0,
		ReceivedAt: t0.Add(time.Duration(lateMS) * time.Millisecond)}
}

func TestRecorderAccounting(t *testing.T) {
	t.Parallel()
	r := NewRecorder(0)
	for _, ev := range []string{"e1", "e2", "e3", "e4"} {
		r.Expect(ev)
	}
	r.Seal()
	r.Record(receipt("o1", "e1", 10))
	r.Record(receipt("o1", "e1", 900)) // a retry of o1: duplicate, not a lateness sample
	r.Record(receipt("o2", "e2", 20))
	r.Record(receipt("o2b", "e2", 30)) // a second occurrence of one-time e2
	r.Record(receipt("o3", "e3", 40))
	r.Record(receipt("x", "foreign", 5)) // not ours
	// e4 never arrives.

	got := r.Tally(10)
	tests := []struct {
		name      string
		got, want int
	}{
		{"expected", got.Expected, 4},
		{"receipts", got.Receipts, 6},
		{"occurrences", got.Occurrences, 5},
		{"duplicates", got.Duplicates, 1},
		{"extra occurrences", got.ExtraOccurrences, 1},
		{"lost", got.Lost, 1},
		{"unexpected", got.Unexpected, 1},
		{"lateness samples", got.Lateness.Count, 5},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, tt.got, tt.want)
		}
	}
	if want := 40 * time.Millisecond; got.Lateness.Max != want {
		t.Errorf("lateness max: got %v, want %v (the duplicate's 900 ms must not count)", got.Lateness.Max, want)
	}
	if want := t0.Add(900 * time.Millisecond); !got.Last.Equal(want) {
		t.Errorf("last receipt: got %v, want %v", got.Last, want)
	}
	if len(got.DeliveryIDs) != 4 {
		t.Errorf("sampled delivery ids of our events: got %v, want 4 (o1, o2, o2b, o3)", got.DeliveryIDs)
	}
	select {
	case <-r.Done():
		t.Fatal("Done closed although e4 was never received")
	default:
	}
}

func TestRecorderDeliveryBeforeCreateAnswer(t *testing.T) {
	t.Parallel()
	r := NewRecorder(0)
	r.Record(receipt("o1", "e1", 1)) // arrives before the 201 was read
	r.Expect("e1")
	r.Seal()
	select {
	case <-r.Done():
	default:
		t.Fatal("Done not closed after the only expected event was received")
	}
	got := r.Tally(0)
	if got.Lost != 0 || got.Unexpected != 0 {
		t.Errorf("lost, unexpected: got %d, %d, want 0, 0", got.Lost, got.Unexpected)
	}
}

func TestRecorderDoneWaitsForSeal(t *testing.T) {
	t.Parallel()
	r := NewRecorder(0)
	r.Expect("e1")
	r.Record(receipt("o1", "e1", 1))
	select {
	case <-r.Done():
		t.Fatal("Done closed before Seal: more events may still be created")
	default:
	}
	r.Seal()
	select {
	case <-r.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed after Seal")
	}
	require.Equal(t, 0, r.Tally(0).Lost)
}

func TestRecorderDuplicateBeforeCreateAnswer(t *testing.T) {
	t.Parallel()
	r := NewRecorder(1)
	r.Record(receipt("o1", "e1", 1))
	r.Record(receipt("o1", "e1", 2)) // a retry, also before the 201 was read
	require.Equal(t, 2, r.Tally(0).Unexpected)
	r.Expect("e1")
	r.Seal()
	got := r.Tally(1)
	require.Equal(t, 0, got.Unexpected, "both receipts belong to e1 once it is expected")
	require.Equal(t, 1, got.Duplicates)
	require.Equal(t, 0, got.Lost)
	require.Equal(t, []string{"o1"}, got.DeliveryIDs)
}

// TestRecorderAgainstModel replays random interleavings of creates and
// receipts (retries, second occurrences, foreign events, deliveries ahead
// of their create answer) and checks the tally against one recomputed from
// the whole log.
func TestRecorderAgainstModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		r := NewRecorder(rng.IntN(8))
		expected := map[string]bool{}
		var log []Receipt
		for range rng.IntN(60) {
			ev := fmt.Sprintf("e%d", rng.IntN(10))
			if rng.IntN(3) == 0 {
				r.Expect(ev)
				expected[ev] = true
				continue
			}
			// Delivery ids belong to one event, as webhook-ids do.
			rc := receipt(fmt.Sprintf("%s/o%d", ev, rng.IntN(3)), ev, rng.IntN(1000))
			r.Record(rc)
			log = append(log, rc)
		}
		r.Seal()

		first := map[string]bool{}   // delivery ids seen
		perEvent := map[string]int{} // event → distinct delivery ids
		want := Tally{Expected: len(expected), Receipts: len(log)}
		for _, rc := range log {
			if !expected[rc.EventID] {
				want.Unexpected++
			}
			if first[rc.DeliveryID] {
				want.Duplicates++
				continue
			}
			first[rc.DeliveryID] = true
			perEvent[rc.EventID]++
		}
		want.Occurrences = len(first)
		for ev, n := range perEvent {
			want.ExtraOccurrences += n - 1
			if expected[ev] {
				want.Lost--
			}
		}
		want.Lost += len(expected)

		got := r.Tally(0)
		require.Equal(t, want.Expected, got.Expected, "expected")
		require.Equal(t, want.Receipts, got.Receipts, "receipts")
		require.Equal(t, want.Occurrences, got.Occurrences, "occurrences")
		require.Equal(t, want.Duplicates, got.Duplicates, "duplicates")
		require.Equal(t, want.ExtraOccurrences, got.ExtraOccurrences, "extra occurrences")
		require.Equal(t, want.Lost, got.Lost, "lost")
		require.Equal(t, want.Unexpected, got.Unexpected, "unexpected")
		require.Equal(t, want.Occurrences, got.Lateness.Count, "lateness samples")
		select {
		case <-r.Done():
			require.Zero(t, want.Lost, "done with events lost")
		default:
			require.NotZero(t, want.Lost, "not done with none lost")
		}
	}
}
