package main

import (
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
	r := NewRecorder()
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
	r := NewRecorder()
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
	r := NewRecorder()
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
