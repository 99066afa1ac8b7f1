package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseProcStatus(t *testing.T) {
	t.Parallel()
	const status = "Name:\tqhronosd\nState:\tS (sleeping)\nVmPeak:\t  812344 kB\nVmHWM:\t  204800 kB\n" +
		"VmRSS:\t  153600 kB\nThreads:\t12\n"
	tests := []struct {
		name    string
		text    string
		want    procMemory
		wantErr string
	}{
		{"linux status", status, procMemory{RSSkB: 153600, HWMkB: 204800}, ""},
		{"no memory lines (kernel thread)", "Name:\tkthreadd\nState:\tS (sleeping)\n", procMemory{},
			"no VmRSS and VmHWM"},
		{"empty", "", procMemory{}, "no VmRSS and VmHWM"},
		{"VmHWM missing", "VmRSS:\t 10 kB\n", procMemory{}, "no VmRSS and VmHWM"},
		{"size not a number", "VmHWM:\t 1 kB\nVmRSS:\t lots kB\n", procMemory{}, `VmRSS: bad size "lots"`},
		{"negative size", "VmHWM:\t 1 kB\nVmRSS:\t -4 kB\n", procMemory{}, `VmRSS: bad size "-4"`},
		{"unit not kB", "VmHWM:\t 1 MB\nVmRSS:\t 1 kB\n", procMemory{}, `VmHWM: want "N kB"`},
		{"unit missing", "VmRSS:\t 1\nVmHWM:\t 1 kB\n", procMemory{}, `VmRSS: want "N kB"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseProcStatus(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error: got %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			require.NoError(t, err)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRunSamplesServerRSS(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/status is Linux only")
	}
	srv := startFake(t)

	// The test process stands in for the server: its own RSS is sampled.
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--server", srv.URL, "--token", "tok", "--events", "1",
		"--due-in", "300ms", "--receivers", "1", "--settle", "100ms", "--check-recorded", "0",
		"--server-pid", strconv.Itoa(os.Getpid()), "--json"}, &stdout, &stderr, time.Now)
	require.Equal(t, exitUnclean, code, "exit code (event #0 arrives twice); stderr: %s", stderr.String())

	var rep Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), "report: %s", stdout.String())
	m := rep.ServerMemory
	require.NotNil(t, m, "server_rss missing from the report: %s", stdout.String())
	if m.Error != "" || m.PID != os.Getpid() || m.Samples < 1 || m.MaxRSSMB <= 0 || m.EndRSSMB <= 0 || m.PeakHWMMB < m.EndRSSMB {
		t.Errorf("server_rss: got %+v, want this pid, samples, positive max and end, VmHWM ≥ end, no error", *m)
	}
	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	if !strings.Contains(table.String(), "server rss         max ") {
		t.Errorf("table: no aligned server rss line in\n%s", table.String())
	}
}

func TestRSSSamplerReportsAnUnreadableProcess(t *testing.T) {
	t.Parallel()
	// No Linux pid reaches 2^31-1 (the kernel's limit is 2^22).
	m := startRSSSampler(math.MaxInt32, time.Millisecond).stop()
	if m.Samples != 0 || m.Error == "" || m.MaxRSSMB != 0 || m.EndRSSMB != 0 {
		t.Errorf("got %+v, want no samples and an error", *m)
	}
	if got := m.describe(); !strings.Contains(got, "unreadable") {
		t.Errorf("describe: got %q, want it to say the process is unreadable", got)
	}
}
