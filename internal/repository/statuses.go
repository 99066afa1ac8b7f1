package repository

import (
	"fmt"
	"strings"

	"github.com/qhronos/qhronos/internal/model"
)

// statusSQL renders the status tokens of a query template into SQL
// literals, from model's states and named sets, so that no query spells a
// status or a list of them itself:
//
//	{waiting} {held} {in_progress} {unfinished} {finished}  → ('pending', 'retrying') …
//	{pending} {dispatching} … {active} {paused} … → 'pending' …
//
// The lists stay literal constants in the SQL text (rendered once, when the
// package's query variables initialize), so PostgreSQL's planner matches
// them to the partial indexes whose predicates name the same states. A
// template with an unknown token panics: every one is rendered at init or
// covered by the contract tests.
func statusSQL(template string) string {
	out := statusTokens.Replace(template)
	if i := strings.IndexByte(out, '{'); i >= 0 {
		panic(fmt.Sprintf("statusSQL: unknown token in %q", out[i:]))
	}
	return out
}

var statusTokens = func() *strings.Replacer {
	var pairs []string
	set := func(name string, states []model.OccurrenceStatus) {
		lits := make([]string, len(states))
		for i, st := range states {
			lits[i] = quote(string(st))
		}
		pairs = append(pairs, "{"+name+"}", "("+strings.Join(lits, ", ")+")")
	}
	set("waiting", model.Waiting)
	set("held", model.Held)
	set("unfinished", model.Unfinished)
	set("in_progress", model.InProgress)
	set("finished", model.Finished)
	for _, st := range []model.OccurrenceStatus{model.OccurrencePending, model.OccurrenceDispatching,
		model.OccurrenceRetrying, model.OccurrenceAwaitingAck, model.OccurrenceCompleted, model.OccurrenceFailed,
		model.OccurrenceMissed, model.OccurrenceCancelled, model.OccurrenceSkipped, model.OccurrenceRunning,
		model.OccurrenceTimedOut} {
		pairs = append(pairs, "{"+string(st)+"}", quote(string(st)))
	}
	for _, st := range []model.EventStatus{model.EventActive, model.EventPaused, model.EventInactive,
		model.EventDeleted} {
		pairs = append(pairs, "{"+string(st)+"}", quote(string(st)))
	}
	return strings.NewReplacer(pairs...)
}()

// quote is a SQL string literal; states are plain words.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// endedOtherwise are the finished states but completed: the rows
// ended_occurrences holds (rare, where completed is most of the history).
var endedOtherwise = func() []model.OccurrenceStatus {
	var out []model.OccurrenceStatus
	for _, st := range model.Finished {
		if st != model.OccurrenceCompleted {
			out = append(out, st)
		}
	}
	return out
}()

// occurrencesHolding names the relation to read occurrences in states
// from: unfinished_occurrences or ended_occurrences when every state is of
// theirs (each read through its own small indexes), else occurrences.
func occurrencesHolding(states []model.OccurrenceStatus) string {
	all := func(set []model.OccurrenceStatus) bool {
		for _, st := range states {
			if !st.In(set) {
				return false
			}
		}
		return len(states) > 0
	}
	switch {
	case all(model.Unfinished):
		return "unfinished_occurrences"
	case all(endedOtherwise):
		return "ended_occurrences"
	}
	return "occurrences"
}
