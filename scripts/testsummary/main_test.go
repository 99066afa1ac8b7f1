package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// run feeds lines of `go test -json` through the summarizer and returns what
// it printed.
func run(t *testing.T, lines ...string) string {
	t.Helper()
	var out strings.Builder
	s := newSummarizer(&out)
	require.NoError(t, s.read(strings.NewReader(strings.Join(lines, "\n"))))
	s.summary()
	return out.String()
}

// line is one event as `go test -json` writes it.
func line(action, test, output string) string {
	b, _ := json.Marshal(event{Action: action, Package: "github.com/qhronos/qhronos/internal/x", Test: test, Output: output})
	return string(b)
}

func out(test, text string) string { return line("output", test, text+"\n") }

func end(action, test string) string { return line(action, test, "") }

func TestSkippedTestsAreSummarizedByReason(t *testing.T) {
	t.Parallel()
	got := run(t,
		out("TestA", "=== RUN   TestA"),
		out("TestA", "    a_test.go:12: PostgreSQL unavailable, skipping (set CI=1 to make this a failure): refused"),
		out("TestA", "--- SKIP: TestA (0.00s)"), end("skip", "TestA"),
		out("TestB", "=== RUN   TestB"),
		out("TestB", "    b_test.go:40: PostgreSQL unavailable, skipping (set CI=1 to make this a failure): refused"),
		out("TestB", "--- SKIP: TestB (0.01s)"), end("skip", "TestB"),
		out("TestC", "=== RUN   TestC"), out("TestC", "    c_test.go:3: chromium not installed"), end("skip", "TestC"),
		out("TestD", "=== RUN   TestD"), out("TestD", "--- PASS: TestD (0.00s)"), end("pass", "TestD"),
		out("", "ok  \tgithub.com/qhronos/qhronos/internal/x\t0.1s"), end("pass", ""),
	)
	require.Equal(t, "ok  \tgithub.com/qhronos/qhronos/internal/x\t0.1s\n"+
		"skipped: 3 tests, for 2 reasons (CI=1 turns a missing service or tool into a failure)\n"+
		"     2  PostgreSQL unavailable, skipping (set CI=1 to make this a failure): refused\n"+
		"        e.g. internal/x TestA, internal/x TestB\n"+
		"     1  chromium not installed\n"+
		"        e.g. internal/x TestC\n", got)
}

func TestFailedTestShowsItsOutputAndNoSkipsSaysNone(t *testing.T) {
	t.Parallel()
	got := run(t,
		out("TestOK", "=== RUN   TestOK"), out("TestOK", "    ok_test.go:1: quiet"), end("pass", "TestOK"),
		out("TestBad", "=== RUN   TestBad"), out("TestBad", "    bad_test.go:9: want 2, got 3"),
		out("TestBad", "--- FAIL: TestBad (0.00s)"), end("fail", "TestBad"),
		out("", "FAIL\tgithub.com/qhronos/qhronos/internal/x\t0.2s"), end("fail", ""),
		"# a line that is not JSON",
	)
	require.Equal(t, "=== RUN   TestBad\n    bad_test.go:9: want 2, got 3\n--- FAIL: TestBad (0.00s)\n"+
		"FAIL\tgithub.com/qhronos/qhronos/internal/x\t0.2s\n# a line that is not JSON\nskipped: none\n", got)
}

func TestPanickedPackageShowsWhatItsRunningTestPrinted(t *testing.T) {
	t.Parallel()
	got := run(t,
		out("TestHang", "=== RUN   TestHang"), out("TestHang", "    hang_test.go:5: waiting for the receiver"),
		out("", "panic: test timed out after 30m0s"),
		out("", "FAIL\tgithub.com/qhronos/qhronos/internal/x\t1800.0s"), end("fail", ""),
	)
	require.Contains(t, got, "panic: test timed out after 30m0s\n")
	require.Contains(t, got, "hang_test.go:5: waiting for the receiver\n")
}
