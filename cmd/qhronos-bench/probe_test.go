package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRunProbesEventsDuringDelivery(t *testing.T) {
	t.Parallel()
	srv := startFake(t)

	// Event #1 is never delivered, so the delivery phase lasts until the
	// 1 s timeout; the first probe goes out at the first due instant anyway.
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--server", srv.URL, "--token", "tok", "--events", "4",
		"--due-in", "400ms", "--burst-window", "100ms", "--receivers", "1", "--timeout", "1s",
		"--check-recorded", "0", "--probe-rate", "50", "--json"}, &stdout, &stderr, time.Now)
	require.Equal(t, exitUnclean, code, "exit code; stderr: %s", stderr.String())

	var rep Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), "report: %s", stdout.String())
	require.NotNil(t, rep.APIProbe, "api_probe missing from the report: %s", stdout.String())
	p := rep.APIProbe
	if p.Sent < 1 {
		t.Errorf("probes sent: got %d, want at least 1", p.Sent)
	}
	if p.Errors != 0 {
		t.Errorf("probe errors: got %d (%v), want 0: every probe asks for an event this run created",
			p.Errors, p.Failures)
	}
	if p.RatePerSecond != 50 {
		t.Errorf("rate_per_second: got %v, want 50", p.RatePerSecond)
	}
	if p.LatencyMS.P99 < p.LatencyMS.P50 || p.LatencyMS.Max < p.LatencyMS.P99 {
		t.Errorf("latency: got %+v, want p50 ≤ p99 ≤ max", p.LatencyMS)
	}
	for _, key := range []string{`"api_probe"`, `"sent"`, `"skipped"`, `"latency_ms"`} {
		if !strings.Contains(stdout.String(), key) {
			t.Errorf("JSON report: missing %s", key)
		}
	}

	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	if !strings.Contains(table.String(), "api probe          GET /events/{id} at 50/s: ") {
		t.Errorf("table: no aligned api probe line in\n%s", table.String())
	}
}

func TestProbeRunSkipsTicksBeyondTheInFlightCap(t *testing.T) {
	t.Parallel()
	r := newProbeRun(10)
	release := make(chan struct{})
	blocked := func() (time.Duration, error) {
		<-release
		return 3 * time.Millisecond, nil
	}
	for range maxProbesInFlight {
		r.launch(blocked)
	}
	r.launch(blocked) // no slot left
	close(release)
	r.inFlight.Wait()
	r.launch(func() (time.Duration, error) { return 9 * time.Millisecond, errors.New("status 503") })
	r.inFlight.Wait()

	got := r.report()
	if got.Sent != maxProbesInFlight+1 || got.Skipped != 1 || got.Errors != 1 {
		t.Errorf("report: got %d sent, %d skipped, %d errors; want %d, 1, 1", got.Sent, got.Skipped, got.Errors,
			maxProbesInFlight+1)
	}
	if got.LatencyMS.Max != 9 || got.LatencyMS.P50 != 3 {
		t.Errorf("latency: got %+v, want p50 3 ms and max 9 ms (an error's latency counts)", got.LatencyMS)
	}
	if got.Failures["status 503"] != 1 {
		t.Errorf("failures: got %v, want one status 503", got.Failures)
	}
}
