package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newOccurrencesCmd(a *app) *cobra.Command {
	cmd := group("occurrences", "Inspect occurrences, their attempts and fan-out deliveries, and replay them",
		newOccurrencesListCmd(a), newOccurrencesGetCmd(a), newOccurrencesAttemptsCmd(a), newOccurrencesDeliveriesCmd(a),
		newOccurrencesReplayCmd(a), newOccurrencesSkipCmd(a), newOccurrencesUnskipCmd(a), newOccurrencesMoveCmd(a))
	cmd.Aliases = []string{"occurrence", "occ"}
	cmd.Example = `  qhronos occurrences list --event 3f2b… --status failed
  qhronos occurrences attempts 9c1d…
  qhronos occurrences deliveries 9c1d…
  qhronos occurrences replay 9c1d… --subscription 0b7e…
  qhronos occurrences replay --status failed --tag billing`
	return cmd
}

// renderOccurrence shows one occurrence: as the API answered it with
// --output json, else as a table in its event's zone (read from the event;
// the local zone when the event is gone or not readable).
func (a *app) renderOccurrence(ctx context.Context, c *client.Client, o *client.Occurrence) error {
	if a.output == "json" {
		return writeJSON(a.stdout, o)
	}
	z := a.localZone()
	if ev, err := c.Events.Get(ctx, o.EventID); err == nil {
		z = a.eventZone(ev.Timezone)
	} else if !errors.Is(err, client.ErrNotFound) {
		return err
	}
	return a.render(o, occurrenceTable(z, o))
}

// occurrenceTable is one occurrence with its times in z.
func occurrenceTable(z zone, o *client.Occurrence) *table {
	t := fields("id", o.ID, "event", o.EventID, "scheduled", z.when(&o.ScheduledAt), "status", string(o.Status),
		"attempts", fmt.Sprint(o.AttemptCount), "manual", flag(o.Manual), "status code", num(o.StatusCode),
		"error", str(o.ErrorMessage), "next attempt", z.when(o.NextAttemptAt), "started", z.when(o.StartedAt),
		"completed", z.when(o.CompletedAt), "reason", reasonText(o.Reason), "planned at", z.when(o.OriginalScheduledAt))
	if f := o.Fanout; f != nil {
		t.rows = append(t.rows, fields("fan-out", fanoutSummary(f)).rows...)
	}
	if r := o.Run; r != nil {
		report := "-"
		if r.Status != nil {
			report = string(*r.Status) + " at " + z.when(r.ReportedAt)
		}
		duration := "-"
		if r.DurationMs != nil {
			duration = (time.Duration(*r.DurationMs) * time.Millisecond).String()
		}
		t.rows = append(t.rows, fields("run deadline", z.when(r.Deadline), "run heartbeat", z.when(r.HeartbeatAt),
			"run report", report, "run output", runOutput(r.Output), "run duration", duration).rows...)
	}
	t.zone = z
	return t
}

// fanoutSummary counts the deliveries of a fan-out occurrence: "3
// subscriptions: 1 delivered, 1 failed, 1 filtered, 0 pending".
func fanoutSummary(f *client.FanoutSummary) string {
	noun := "subscriptions"
	if f.Subscriptions == 1 {
		noun = "subscription"
	}
	return fmt.Sprintf("%d %s: %d delivered, %d failed, %d filtered, %d pending (qhronos occurrences deliveries)",
		f.Subscriptions, noun, f.Delivered, f.Failed, f.Filtered, f.Pending)
}

// runOutput is a run's output as compact JSON on one line, cut short in a
// table: it may hold up to 16 KB (--output json shows it whole).
func runOutput(out *json.RawMessage) string {
	if out == nil || string(*out) == "null" {
		return "-"
	}
	var b bytes.Buffer
	if json.Compact(&b, *out) != nil {
		return string(*out)
	}
	const most = 120
	if s := []rune(b.String()); len(s) > most {
		return string(s[:most]) + "… (--output json for all of it)"
	}
	return b.String()
}

func reasonText(r *client.OccurrenceReason) string {
	if r == nil {
		return "-"
	}
	return string(*r)
}
