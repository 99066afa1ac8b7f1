package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeQhronos is a minimal server speaking the create, read and delivery
// side of the Qhronos API, with two faults on purpose: event #0 is delivered
// twice and event #1 never, so the run must report one duplicate and one
// loss. GET /events/{id} knows only the events it created.
type fakeQhronos struct {
	t       *testing.T
	mu      sync.Mutex
	n       int
	created map[string]bool
	timers  []*time.Timer
}

func (f *fakeQhronos) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer tok" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/events":
		var req eventRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		at, err := time.Parse(time.RFC3339Nano, req.StartTime)
		if err != nil || !at.After(time.Now()) {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.n++
		id := fmt.Sprintf("ev-%d", f.n)
		if f.created == nil {
			f.created = map[string]bool{}
		}
		f.created[id] = true
		f.mu.Unlock()
		sends := 1
		switch {
		case strings.HasSuffix(req.Name, " #0"):
			sends = 2
		case strings.HasSuffix(req.Name, " #1"):
			sends = 0
		}
		body := fmt.Sprintf(`{"event_id":%q,"occurrence_id":"occ-%s","attempt":1,"scheduled_at":%q}`, id, id,
			req.StartTime)
		for range sends {
			f.mu.Lock()
			f.timers = append(f.timers, time.AfterFunc(time.Until(at), func() { f.deliver(req.Webhook, id, body) }))
			f.mu.Unlock()
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = fmt.Fprintf(w, `{"id":%q}`, id)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/events/"):
		id := strings.TrimPrefix(r.URL.Path, "/events/")
		f.mu.Lock()
		known := f.created[id]
		f.mu.Unlock()
		if !known {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_, _ = fmt.Fprintf(w, `{"id":%q,"status":"active"}`, id)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/occurrences/"):
		_, _ = fmt.Fprint(w, `{"status":"completed"}`)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (f *fakeQhronos) deliver(url, id, body string) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		f.t.Errorf("build delivery: %v", err)
		return
	}
	req.Header.Set("webhook-id", "occ-"+id)
	req.Header.Set("X-Qhronos-Signature", sign([]byte("k"), []byte(body)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return // the run may already be over for a late duplicate
	}
	_ = resp.Body.Close()
}

func (f *fakeQhronos) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.timers {
		t.Stop()
	}
}

// startFake serves a fake Qhronos until the test ends.
func startFake(t *testing.T) *httptest.Server {
	t.Helper()
	fake := &fakeQhronos{t: t}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	t.Cleanup(fake.stop)
	return srv
}

func TestRunReportsDuplicatesAndLosses(t *testing.T) {
	t.Parallel()
	srv := startFake(t)

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--server", srv.URL, "--token", "tok", "--events", "6",
		"--due-in", "400ms", "--burst-window", "100ms", "--receivers", "2", "--timeout", "1s",
		"--settle", "300ms", "--verify-signature", "k", "--check-recorded", "3", "--json"}, &stdout, &stderr,
		time.Now)
	require.Equal(t, exitUnclean, code, "exit code; stderr: %s", stderr.String())

	var rep Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), "report: %s", stdout.String())
	tests := []struct {
		name      string
		got, want int
	}{
		{"events created", rep.EventsCreated, 6},
		{"receipts", rep.Receipts, 6},
		{"occurrences", rep.Occurrences, 5},
		{"duplicates", rep.Duplicates, 1},
		{"lost", rep.Lost, 1},
		{"bad signatures", rep.BadSignatures, 0},
		{"recorded completed", rep.Recorded.Completed, 3},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, tt.got, tt.want)
		}
	}
	if !rep.TimedOut {
		t.Errorf("timed_out: got false, want true (one event never arrives)")
	}
	if rep.LatenessMS.P50 < 0 || rep.LatenessMS.Max > 1000 {
		t.Errorf("lateness: got p50 %v ms, max %v ms, want within [0, 1000]", rep.LatenessMS.P50, rep.LatenessMS.Max)
	}
	for _, key := range []string{`"api_probe"`, `"server_rss"`} {
		if strings.Contains(stdout.String(), key) {
			t.Errorf("report: has %s although its option is off", key)
		}
	}
}

func TestRunRefusesNonLoopbackServer(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--server", "http://192.0.2.1:8080", "--token", "tok"},
		&stdout, &stderr, time.Now)
	if code != exitError {
		t.Errorf("exit code: got %d, want %d", code, exitError)
	}
	if !strings.Contains(stderr.String(), "not a loopback address") {
		t.Errorf("stderr: got %q, want it to name the loopback rule", stderr.String())
	}
}

func TestRunRefusesBadProbeAndPIDFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"negative probe rate", []string{"--probe-rate", "-1"}, "--probe-rate: must be between 0"},
		{"probe rate not a number", []string{"--probe-rate", "NaN"}, "--probe-rate: must be between 0"},
		{"probe rate too high", []string{"--probe-rate", "1e6"}, "--probe-rate: must be between 0"},
		{"negative server pid", []string{"--server-pid", "-5"}, "--server-pid: must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"--token", "tok"}, tt.args...), &stdout, &stderr,
				time.Now)
			if code != exitUsage {
				t.Errorf("exit code: got %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr: got %q, want it to contain %q", stderr.String(), tt.want)
			}
		})
	}
}

func TestParseConfigSteadyDerivesEvents(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	cfg, err := parseConfig([]string{"--token", "t", "--mode", "steady", "--rate", "500", "--duration", "20s"}, &stderr)
	require.NoError(t, err)
	if cfg.Events != 10_000 {
		t.Errorf("events: got %d, want 500/s × 20 s = 10000", cfg.Events)
	}
	if _, err := parseConfig([]string{"--token", "t", "--mode", "steady", "--rate", "500", "--duration", "20s",
		"--events", "5"}, &stderr); err == nil {
		t.Error("steady with contradicting --events: got nil error, want one")
	}
	if _, err := parseConfig([]string{"--token", "t", "--events", "2000000"}, &stderr); err == nil {
		t.Error("--events over the bound: got nil error, want one")
	}
}
