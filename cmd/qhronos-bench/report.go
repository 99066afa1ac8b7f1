package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of a run, printed as a table or JSON.
type Report struct {
	Date          string  `json:"date"`
	Server        string  `json:"server"`
	Mode          string  `json:"mode"`
	Receivers     int     `json:"receivers"`
	Rate          float64 `json:"rate,omitempty"`
	DurationSec   float64 `json:"duration_seconds,omitempty"`
	BurstWindowMS float64 `json:"burst_window_ms"`
	FirstDue      string  `json:"first_due"`
	LastDue       string  `json:"last_due"`
	LoadBefore    string  `json:"load_before,omitempty"`
	LoadAfter     string  `json:"load_after,omitempty"`

	EventsPlanned    int            `json:"events_planned"`
	EventsCreated    int            `json:"events_created"`
	CreateFailed     int            `json:"create_failed"`
	CreateSkipped    int            `json:"create_skipped_late"`
	CreateSeconds    float64        `json:"create_seconds"`
	CreateRate       float64        `json:"create_rate"`
	CreateLatencyP50 float64        `json:"create_latency_p50_ms"`
	CreateLatencyP99 float64        `json:"create_latency_p99_ms"`
	CreateFailures   map[string]int `json:"create_failures,omitempty"`

	Receipts            int     `json:"receipts"`
	Occurrences         int     `json:"occurrences"`
	DeliverySeconds     float64 `json:"delivery_seconds"`
	DeliveriesPerSecond float64 `json:"deliveries_per_second"`
	DrainSeconds        float64 `json:"drain_seconds"` // first due instant to last receipt
	LatenessMS          struct {
		Min  float64 `json:"min"`
		P50  float64 `json:"p50"`
		P95  float64 `json:"p95"`
		P99  float64 `json:"p99"`
		Max  float64 `json:"max"`
		Mean float64 `json:"mean"`
	} `json:"lateness_ms"`
	Duplicates       int            `json:"duplicates"`
	ExtraOccurrences int            `json:"extra_occurrences"`
	Lost             int            `json:"lost"`
	Unexpected       int            `json:"unexpected"`
	Malformed        int64          `json:"malformed"`
	SignatureChecked bool           `json:"signature_checked"`
	BadSignatures    int            `json:"bad_signatures"`
	Recorded         *recordedCheck `json:"recorded,omitempty"`
	APIProbe         *probeReport   `json:"api_probe,omitempty"`
	ServerMemory     *serverMemory  `json:"server_rss,omitempty"`
	TimedOut         bool           `json:"timed_out"`
	Warnings         []string       `json:"warnings,omitempty"`
}

// fillDeliveries copies a recorder tally into the report.
func (r *Report) fillDeliveries(t Tally) {
	r.Receipts, r.Occurrences = t.Receipts, t.Occurrences
	r.Duplicates, r.ExtraOccurrences, r.Lost = t.Duplicates, t.ExtraOccurrences, t.Lost
	r.Unexpected, r.BadSignatures = t.Unexpected, t.BadSignatures
	if span := t.Last.Sub(t.First); span > 0 && t.Receipts > 1 {
		r.DeliverySeconds = span.Seconds()
		r.DeliveriesPerSecond = float64(t.Receipts-1) / span.Seconds()
	}
	l := t.Lateness
	r.LatenessMS.Min, r.LatenessMS.P50, r.LatenessMS.P95 = ms(l.Min), ms(l.P50), ms(l.P95)
	r.LatenessMS.P99, r.LatenessMS.Max, r.LatenessMS.Mean = ms(l.P99), ms(l.Max), ms(l.Mean)
}

// fillCreates copies a creation result into the report.
func (r *Report) fillCreates(c createResult) {
	r.EventsCreated, r.CreateFailed, r.CreateSkipped = c.Created, c.Failed, c.Skipped
	r.CreateSeconds = c.End.Sub(c.Start).Seconds()
	if r.CreateSeconds > 0 {
		r.CreateRate = float64(c.Created) / r.CreateSeconds
	}
	r.CreateLatencyP50, r.CreateLatencyP99 = ms(c.Latency.P50), ms(c.Latency.P99)
	if len(c.Failures) > 0 {
		r.CreateFailures = c.Failures
	}
}

// Clean reports whether every created event was delivered exactly once,
// correctly signed, and nothing failed to be created.
func (r *Report) Clean() bool {
	return r.Lost == 0 && r.Duplicates == 0 && r.ExtraOccurrences == 0 && r.BadSignatures == 0 &&
		r.CreateFailed == 0 && r.CreateSkipped == 0 && r.Malformed == 0 && !r.TimedOut
}

// ms converts to milliseconds rounded to microseconds.
func ms(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)) / float64(time.Millisecond)
}

// WriteJSON prints r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	return nil
}

// WriteTable prints r as an aligned two-column table.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, a ...any) {
		_, _ = fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, a...)...)
	}
	row("server", "%s", r.Server)
	switch r.Mode {
	case ModeSteady:
		row("mode", "steady %.0f/s for %.0fs, %d receivers", r.Rate, r.DurationSec, r.Receivers)
	default:
		row("mode", "burst within %.0f ms, %d receivers", r.BurstWindowMS, r.Receivers)
	}
	row("due", "%s … %s", r.FirstDue, r.LastDue)
	if r.LoadBefore != "" {
		row("load average", "%s before, %s after", r.LoadBefore, r.LoadAfter)
	}
	row("events created", "%d of %d (%d failed, %d skipped as too late)", r.EventsCreated, r.EventsPlanned,
		r.CreateFailed, r.CreateSkipped)
	row("create rate", "%.0f/s over %.2fs (latency p50 %.1f ms, p99 %.1f ms)", r.CreateRate, r.CreateSeconds,
		r.CreateLatencyP50, r.CreateLatencyP99)
	row("deliveries", "%d receipts, %d occurrences", r.Receipts, r.Occurrences)
	row("deliveries/s", "%.0f (first to last receipt, %.3fs)", r.DeliveriesPerSecond, r.DeliverySeconds)
	row("drained", "%.3fs after the first due instant", r.DrainSeconds)
	l := r.LatenessMS
	row("lateness", "p50 %.2f ms  p95 %.2f ms  p99 %.2f ms  max %.2f ms  (min %.2f, mean %.2f)",
		l.P50, l.P95, l.P99, l.Max, l.Min, l.Mean)
	row("duplicates", "%d (same webhook-id again)", r.Duplicates)
	row("extra occurrences", "%d (more than one webhook-id per event)", r.ExtraOccurrences)
	row("lost", "%d (created, never received)", r.Lost)
	if r.Unexpected > 0 || r.Malformed > 0 {
		row("unexpected", "%d receipts for other events, %d malformed", r.Unexpected, r.Malformed)
	}
	if r.SignatureChecked {
		row("bad signatures", "%d", r.BadSignatures)
	}
	if r.Recorded != nil {
		row("recorded", "%d of %d sampled occurrences completed (%s)", r.Recorded.Completed, r.Recorded.Checked,
			formatCounts(r.Recorded.Statuses))
	}
	if p := r.APIProbe; p != nil {
		l := p.LatencyMS
		row("api probe", "GET /events/{id} at %g/s: %d sent, %d errors, %d skipped; "+
			"p50 %.2f ms  p95 %.2f ms  p99 %.2f ms  max %.2f ms",
			p.RatePerSecond, p.Sent, p.Errors, p.Skipped, l.P50, l.P95, l.P99, l.Max)
	}
	if m := r.ServerMemory; m != nil {
		row("server rss", "%s", m.describe())
	}
	if r.TimedOut {
		row("timed out", "yes")
	}
	for k, n := range r.CreateFailures {
		row("create failure", "%d× %s", n, k)
	}
	if r.APIProbe != nil {
		for k, n := range r.APIProbe.Failures {
			row("probe failure", "%d× %s", n, k)
		}
	}
	for _, wn := range r.Warnings {
		row("warning", "%s", wn)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

func formatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
