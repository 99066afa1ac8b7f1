package harness

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// clean is a run of two occurrences, each sent and received once, with a
// fault from 1 s to 5 s that delayed the second one until 6 s.
func clean() *History {
	return &History{
		Scenario: "unit", FaultStart: at(1000), Healed: at(5000),
		Due: []Due{
			{Key: "e1", EventID: "ev1", OccurrenceID: "o1", ScheduledAt: at(0), Status: "completed"},
			{Key: "e2", EventID: "ev2", OccurrenceID: "o2", ScheduledAt: at(2000), Status: "completed"},
		},
		Receipts: []Receipt{
			{Key: "e1", WebhookID: "o1", Attempt: 1, At: at(40)},
			{Key: "e2", WebhookID: "o2", Attempt: 1, At: at(6000)},
		},
		Attempts: []Attempt{
			{OccurrenceID: "o1", Attempt: 1, StartedAt: at(30), Outcome: "completed"},
			{OccurrenceID: "o2", Attempt: 1, StartedAt: at(5990), Outcome: "completed"},
		},
		Sends: []Send{
			{Instance: "a", OccurrenceID: "o1", Attempt: 1, Claim: "c1", LeaseUntil: at(3000), SentAt: at(30)},
			{Instance: "b", OccurrenceID: "o2", Attempt: 1, Claim: "c2", LeaseUntil: at(8990), SentAt: at(5990)},
		},
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(h *History)
		pass   bool
		lost   int
		dup    int
		rule   string // a violation line starts with it
	}{
		{name: "clean", change: func(*History) {}, pass: true},
		{name: "never received is lost", change: func(h *History) {
			h.Receipts = h.Receipts[:1]
		}, lost: 1, rule: "lost"},
		{name: "no occurrence row is lost and stuck", change: func(h *History) {
			h.Due[1].OccurrenceID, h.Due[1].Status = "", ""
			h.Receipts = h.Receipts[:1]
		}, lost: 1, rule: "stuck"},
		{name: "received but not completed is stuck", change: func(h *History) {
			h.Due[1].Status = "scheduled"
		}, rule: "stuck"},
		{name: "wrong webhook-id", change: func(h *History) {
			h.Receipts[1].WebhookID = "o1"
		}, rule: "wrong webhook-id"},
		{name: "a receipt for no event of the run", change: func(h *History) {
			h.Receipts = append(h.Receipts, Receipt{Key: "zz", WebhookID: "o9", Attempt: 1, At: at(50)})
		}, rule: "unknown receipt"},
		{name: "duplicate of a send under way at the fault, never recorded", change: func(h *History) {
			h.Receipts = append(h.Receipts, Receipt{Key: "e2", WebhookID: "o2", Attempt: 2, At: at(6000)})
			h.Receipts[1] = Receipt{Key: "e2", WebhookID: "o2", Attempt: 1, At: at(2010)}
			h.Sends[1] = Send{Instance: "a", OccurrenceID: "o2", Attempt: 1, Claim: "c2", LeaseUntil: at(4000), SentAt: at(2000)}
			h.Sends = append(h.Sends, Send{Instance: "b", OccurrenceID: "o2", Attempt: 2, Claim: "c3", LeaseUntil: at(9000), SentAt: at(5990)})
			h.Attempts[1].Attempt = 2
		}, pass: true, dup: 1},
		{name: "a send under way at the fault reaching the receiver after its re-send", change: func(h *History) {
			h.Receipts = append(h.Receipts, Receipt{Key: "e2", WebhookID: "o2", Attempt: 1, At: at(7000)})
			h.Receipts[1].Attempt = 2
			h.Sends[1].Attempt = 2
			h.Attempts[1].Attempt = 2
			h.Sends = append(h.Sends, Send{Instance: "a", OccurrenceID: "o2", Attempt: 1, Claim: "c1b", LeaseUntil: at(4000), SentAt: at(2000)})
		}, pass: true, dup: 1},
		{name: "duplicate after a recorded success", change: func(h *History) {
			h.Receipts = append(h.Receipts, Receipt{Key: "e1", WebhookID: "o1", Attempt: 2, At: at(3500)})
			h.Sends = append(h.Sends, Send{Instance: "b", OccurrenceID: "o1", Attempt: 2, Claim: "c9", LeaseUntil: at(6500), SentAt: at(3500)})
		}, dup: 1, rule: "duplicate"},
		{name: "duplicate of an unrecorded send made after the heal", change: func(h *History) {
			h.Receipts = append(h.Receipts, Receipt{Key: "e2", WebhookID: "o2", Attempt: 2, At: at(9500)})
			h.Attempts = h.Attempts[:1]
			h.Sends = append(h.Sends, Send{Instance: "b", OccurrenceID: "o2", Attempt: 2, Claim: "c9", LeaseUntil: at(12000), SentAt: at(9500)})
		}, dup: 1, rule: "duplicate"},
		{name: "send after the lease lapsed by the sender's clock", change: func(h *History) {
			h.Sends[0].SentAt = at(3000)
		}, rule: "send after lapse"},
		{name: "send with no lease held", change: func(h *History) {
			h.Sends[0].LeaseUntil = time.Time{}
		}, rule: "send after lapse"},
		{name: "receipt with no send logged", change: func(h *History) {
			h.Sends = h.Sends[1:]
		}, rule: "unlogged send"},
		{name: "a new claim sends while an unrecorded one still holds the lease", change: func(h *History) {
			h.Sends = append(h.Sends, Send{Instance: "c", OccurrenceID: "o2", Attempt: 0, Claim: "cX", LeaseUntil: at(7000), SentAt: at(4000)})
		}, rule: "split ownership"},
		{name: "a retry after a recorded failure, even after the heal", change: func(h *History) {
			h.Receipts = append(h.Receipts, Receipt{Key: "e2", WebhookID: "o2", Attempt: 2, At: at(9500)})
			h.Attempts[1].Outcome = "retrying"
			h.Attempts = append(h.Attempts, Attempt{OccurrenceID: "o2", Attempt: 2, StartedAt: at(9490), Outcome: "completed"})
			h.Sends = append(h.Sends, Send{Instance: "b", OccurrenceID: "o2", Attempt: 2, Claim: "c9", LeaseUntil: at(12000), SentAt: at(9490)})
		}, pass: true, dup: 1},
		{name: "a lapsed lease taken over late", change: func(h *History) {
			h.Takeover = 2 * time.Second
			h.Sends = append(h.Sends, Send{Instance: "c", OccurrenceID: "o2", Attempt: 0, Claim: "cX", LeaseUntil: at(1500), SentAt: at(500)})
		}, rule: "slow takeover"},
		{name: "a lapsed lease taken over in time", change: func(h *History) {
			h.Takeover = 5 * time.Second
			h.Sends = append(h.Sends, Send{Instance: "c", OccurrenceID: "o2", Attempt: 0, Claim: "cX", LeaseUntil: at(1500), SentAt: at(500)})
		}, pass: true},
		{name: "a new claim after a recorded attempt may send within the old lease", change: func(h *History) {
			h.Attempts = append(h.Attempts, Attempt{OccurrenceID: "o2", Attempt: 0, StartedAt: at(4000), Outcome: "retrying"})
			h.Sends = append(h.Sends, Send{Instance: "c", OccurrenceID: "o2", Attempt: 0, Claim: "cX", LeaseUntil: at(7000), SentAt: at(4000)})
		}, pass: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := clean()
			tc.change(h)
			r := Check(h)
			if got := r.Pass(); got != tc.pass {
				t.Errorf("Pass() = %v, want %v; violations %q", got, tc.pass, r.Violations)
			}
			if r.Lost != tc.lost || r.Dup != tc.dup {
				t.Errorf("lost=%d dup=%d, want lost=%d dup=%d", r.Lost, r.Dup, tc.lost, tc.dup)
			}
			if tc.rule != "" && !hasRule(r.Violations, tc.rule) {
				t.Errorf("violations %q, want one of rule %q", r.Violations, tc.rule)
			}
		})
	}
}

func hasRule(vs []string, rule string) bool {
	for _, v := range vs {
		if strings.HasPrefix(v, rule+":") {
			return true
		}
	}
	return false
}

func TestCheckMeasuresLatenessAndRecovery(t *testing.T) {
	t.Parallel()
	r := Check(clean())
	if got, want := r.LateMax, 4000*time.Millisecond; got != want {
		t.Errorf("LateMax = %s, want %s (o2 due at 2 s, received at 6 s)", got, want)
	}
	if got, want := r.Recovered, time.Second; got != want {
		t.Errorf("Recovered = %s, want %s (healed at 5 s, the last one due before received at 6 s)", got, want)
	}
	if got, want := r.Line(), "scenario=unit lost=0 dup=0 late_max_ms=4000 recovered_s=1.0 verdict=PASS"; got != want {
		t.Errorf("Line() = %q, want %q", got, want)
	}
}

func TestCheckBoundsViolationLines(t *testing.T) {
	t.Parallel()
	h := clean()
	h.Receipts = nil
	for i := range 20 {
		h.Due = append(h.Due, Due{Key: "x" + string(rune('a'+i)), OccurrenceID: "ox", ScheduledAt: at(0), Status: "completed"})
	}
	r := Check(h)
	if r.Lost != 22 {
		t.Fatalf("lost = %d, want 22", r.Lost)
	}
	if got := len(r.Violations); got != maxViolations+1 {
		t.Errorf("%d violation lines, want %d (then a count): %q", got, maxViolations+1, r.Violations)
	}
	if !strings.Contains(r.Line(), "lost=22") || !strings.HasSuffix(r.Line(), "verdict=FAIL") {
		t.Errorf("Line() = %q", r.Line())
	}
}

func TestParseSends(t *testing.T) {
	t.Parallel()
	log := `{"level":"info","msg":"dispatcher started"}
{"level":"debug","ts":"x","logger":"dispatcher","msg":"delivery sending","occurrence_id":"o1","attempt":2,"slot":3,"epoch":7,"lease_until":"2030-01-01T12:00:03.5Z","sent_at":"2030-01-01T12:00:00.000000001Z"}
{"level":"debug","msg":"delivery sending","occurrence_id":"o2","lease_until":"soon","sent_at":"now"}
not json`
	sends, bad := ParseSends("a", log)
	want := Send{Instance: "a", OccurrenceID: "o1", Attempt: 2, Claim: "a/3/7", LeaseUntil: at(3500), SentAt: t0.Add(1)}
	if len(sends) != 1 || sends[0] != want {
		t.Errorf("sends = %+v, want [%+v]", sends, want)
	}
	if len(bad) != 1 {
		t.Errorf("bad = %q, want the line with unparsable instants", bad)
	}
}
