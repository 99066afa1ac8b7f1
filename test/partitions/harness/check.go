package harness

import (
	"fmt"
	"sort"
	"time"
)

// Result is the checker's verdict on one history.
type Result struct {
	Scenario string
	Lost     int // due occurrences no receiver ever processed
	Stuck    int // due occurrences not completed at the end
	Dup      int // receipts beyond the first of an occurrence
	// LateMax is the worst lateness of a first receipt after its instant.
	LateMax time.Duration
	// Recovered is how long after the heal the last occurrence due before
	// it reached its receiver (0 when all had before the heal).
	Recovered time.Duration
	// Violations names each broken rule, one line each.
	Violations []string
}

// Pass reports whether nothing was lost, stuck or sent wrongly.
func (r *Result) Pass() bool { return r.Lost == 0 && r.Stuck == 0 && len(r.Violations) == 0 }

// Line is the one-line summary bench/partitions.sh and the tests print.
func (r *Result) Line() string {
	verdict := "PASS"
	if !r.Pass() {
		verdict = "FAIL"
	}
	return fmt.Sprintf("scenario=%s lost=%d dup=%d late_max_ms=%d recovered_s=%.1f verdict=%s", r.Scenario, r.Lost, r.Dup,
		r.LateMax.Milliseconds(), r.Recovered.Seconds(), verdict)
}

// maxViolations bounds how many lines of one rule a result keeps; the
// count is always reported.
const maxViolations = 5

// Check judges a history:
//   - every due occurrence processed by its receiver at least once, and
//     completed in the database at the end;
//   - every receipt carries its occurrence's id as webhook-id;
//   - a receipt beyond the first only as a retry of a recorded failure, or
//     as a re-send of an attempt never recorded that was under way at the
//     fault (it reached the receiver before the heal); never after a
//     recorded success;
//   - every send left before its sender's lease expired by the sender's
//     own clock, and every receipt matches a logged send;
//   - no send under a new claim while an earlier claim whose send was never
//     recorded still held its lease (ownership never split), and, when
//     h.Takeover is set, that send no later than Takeover after the lease
//     lapsed (a lapsed lease frees its row for the others).
func Check(h *History) *Result {
	r := &Result{Scenario: h.Scenario}
	rules := map[string]int{}
	violate := func(rule, format string, args ...any) {
		rules[rule]++
		if rules[rule] <= maxViolations {
			r.Violations = append(r.Violations, rule+": "+fmt.Sprintf(format, args...))
		}
	}

	byKey := make(map[string]*Due, len(h.Due))
	for i := range h.Due {
		byKey[h.Due[i].Key] = &h.Due[i]
	}
	receipts := map[string][]Receipt{}
	for _, rc := range h.Receipts {
		d, ok := byKey[rc.Key]
		if !ok {
			violate("unknown receipt", "key %q webhook-id %s: no event of the run", rc.Key, rc.WebhookID)
			continue
		}
		if rc.WebhookID != d.OccurrenceID {
			violate("wrong webhook-id", "event %s got webhook-id %q, its occurrence is %q", d.Key, rc.WebhookID, d.OccurrenceID)
		}
		receipts[d.Key] = append(receipts[d.Key], rc)
	}
	completed := map[attemptKey]bool{}
	recorded := map[attemptKey]bool{}
	for _, a := range h.Attempts {
		k := attemptKey{a.OccurrenceID, a.Attempt}
		recorded[k] = true
		if a.Outcome == "completed" {
			completed[k] = true
		}
	}
	sentAt := map[attemptKey]time.Time{}
	for _, s := range h.Sends {
		sentAt[attemptKey{s.OccurrenceID, s.Attempt}] = s.SentAt
	}

	var caughtUp time.Time
	for i := range h.Due {
		d := &h.Due[i]
		if d.Status != "completed" {
			r.Stuck++
			violate("stuck", "event %s occurrence %q is %q at the end, want completed", d.Key, d.OccurrenceID, d.Status)
		}
		got := receipts[d.Key]
		if len(got) == 0 {
			r.Lost++
			violate("lost", "event %s (occurrence %q, due %s) never reached its receiver", d.Key, d.OccurrenceID,
				d.ScheduledAt.Format(time.RFC3339Nano))
			continue
		}
		sort.Slice(got, func(a, b int) bool { return got[a].At.Before(got[b].At) })
		if late := got[0].At.Sub(d.ScheduledAt); late > r.LateMax {
			r.LateMax = late
		}
		if !h.Healed.IsZero() && !d.ScheduledAt.After(h.Healed) && got[0].At.After(caughtUp) {
			caughtUp = got[0].At
		}
		for _, rc := range got {
			if _, ok := sentAt[attemptKey{rc.WebhookID, rc.Attempt}]; !ok {
				violate("unlogged send", "occurrence %s attempt %d reached the receiver at %s with no send logged",
					rc.WebhookID, rc.Attempt, rc.At.Format(time.RFC3339Nano))
			}
		}
		r.Dup += len(got) - 1
		if len(got) > 1 {
			checkDuplicates(h, d, got, sentAt, recorded, completed, violate)
		}
	}
	if caughtUp.After(h.Healed) {
		r.Recovered = caughtUp.Sub(h.Healed)
	}
	checkOwnership(h.Sends, recorded, h.Takeover, violate)
	for rule, n := range rules {
		if n > maxViolations {
			r.Violations = append(r.Violations, fmt.Sprintf("%s: %d more", rule, n-maxViolations))
		}
	}
	sort.Strings(r.Violations)
	return r
}

// checkDuplicates judges the receipts of one occurrence that got more than
// one. Each is the attempt that succeeded, a retry of an attempt recorded
// as failed (the sender saw it fail), or an attempt never recorded whose
// send left before the heal: under way at the fault, maybe delivered only
// when the link came back. Nothing is sent after the success.
func checkDuplicates(h *History, d *Due, got []Receipt, sentAt map[attemptKey]time.Time, recorded, completed map[attemptKey]bool,
	violate func(rule, format string, args ...any)) {
	success := 0
	for _, rc := range got {
		if completed[attemptKey{rc.WebhookID, rc.Attempt}] {
			success = rc.Attempt
		}
	}
	for _, rc := range got {
		k := attemptKey{rc.WebhookID, rc.Attempt}
		at, logged := sentAt[k]
		switch {
		case success != 0 && rc.Attempt > success:
			violate("duplicate", "occurrence %s: attempt %d sent after attempt %d's success was recorded", d.OccurrenceID,
				rc.Attempt, success)
		case recorded[k] || !logged:
			// The success, a recorded failure, or an unlogged send
			// (reported as such).
		case h.Healed.IsZero() || !at.Before(h.Healed):
			violate("duplicate", "occurrence %s: attempt %d, sent at %s after the fault healed, was never recorded and "+
				"reached the receiver again", d.OccurrenceID, rc.Attempt, at.Format(time.RFC3339Nano))
		}
	}
}

type attemptKey struct {
	occurrence string
	attempt    int
}

// checkOwnership checks the send log alone: each send within its lease by
// its sender's clock, and a later claim's send never inside the lease of
// an earlier claim whose attempt was not recorded (a recorded outcome
// ends the lease at once; an unrecorded one holds it until it expires).
func checkOwnership(sends []Send, recorded map[attemptKey]bool, takeover time.Duration,
	violate func(rule, format string, args ...any)) {
	byOcc := map[string][]Send{}
	for _, s := range sends {
		if !s.SentAt.Before(s.LeaseUntil) {
			violate("send after lapse", "%s sent occurrence %s attempt %d at %s, its lease ended %s", s.Instance,
				s.OccurrenceID, s.Attempt, s.SentAt.Format(time.RFC3339Nano), s.LeaseUntil.Format(time.RFC3339Nano))
		}
		byOcc[s.OccurrenceID] = append(byOcc[s.OccurrenceID], s)
	}
	for id, list := range byOcc {
		sort.Slice(list, func(a, b int) bool { return list[a].SentAt.Before(list[b].SentAt) })
		// held is the latest lease end among earlier unrecorded claims.
		var held time.Time
		var holder Send
		for _, s := range list {
			if !held.IsZero() && s.Claim != holder.Claim {
				if s.SentAt.Before(held) {
					violate("split ownership", "occurrence %s: %s sent attempt %d at %s while %s's unrecorded attempt %d held "+
						"the lease until %s", id, s.Instance, s.Attempt, s.SentAt.Format(time.RFC3339Nano), holder.Instance,
						holder.Attempt, held.Format(time.RFC3339Nano))
				}
				if takeover > 0 && s.SentAt.Sub(held) > takeover {
					violate("slow takeover", "occurrence %s: %s's unrecorded attempt %d lost its lease at %s; the next send "+
						"(%s, attempt %d) came %s later, want within %s", id, holder.Instance, holder.Attempt,
						held.Format(time.RFC3339Nano), s.Instance, s.Attempt, s.SentAt.Sub(held).Round(time.Millisecond), takeover)
				}
				held = time.Time{}
			}
			if !recorded[attemptKey{s.OccurrenceID, s.Attempt}] && s.LeaseUntil.After(held) {
				held, holder = s.LeaseUntil, s
			}
		}
	}
}
