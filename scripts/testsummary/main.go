// Command testsummary reads `go test -json` on stdin and prints what plain
// `go test` would (a line per package, the output of failed tests), then one
// summary of the tests that were skipped, grouped by the reason they gave.
// scripts/test pipes the suite through it, so a run that skipped tests (no
// PostgreSQL or Redis outside CI, a tool not installed) says so at the end.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// skip is one reason and the tests that gave it.
type skip struct {
	reason string
	tests  []string
}

// summarizer keeps each running test's output until the test ends.
type summarizer struct {
	out     io.Writer
	running map[string][]string // package + " " + test → output lines
	skips   map[string]*skip
	total   int
}

func newSummarizer(out io.Writer) *summarizer {
	return &summarizer{out: out, running: map[string][]string{}, skips: map[string]*skip{}}
}

func main() {
	s := newSummarizer(os.Stdout)
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	s.summary()
}

func (s *summarizer) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(s.out, sc.Text()) // not JSON: go's own messages
			continue
		}
		s.handle(e)
	}
	return sc.Err()
}

func (s *summarizer) handle(e event) {
	key := e.Package + " " + e.Test
	switch {
	case e.Action == "output" && e.Test != "":
		s.running[key] = append(s.running[key], e.Output)
	case e.Action == "output" || e.Action == "build-output":
		// The package's own lines: "ok  pkg 1.2s", "FAIL pkg", build errors,
		// a panic's trace; the per-test markers go only with a failed test.
		if !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "--- ") &&
			e.Output != "PASS\n" && e.Output != "FAIL\n" {
			fmt.Fprint(s.out, e.Output)
		}
	case e.Test == "" && e.Action == "fail":
		// A package that panicked or timed out: show what its running tests printed.
		for k, lines := range s.running {
			if strings.HasPrefix(k, e.Package+" ") {
				fmt.Fprint(s.out, strings.Join(lines, ""))
				delete(s.running, k)
			}
		}
	case e.Action == "fail":
		fmt.Fprint(s.out, strings.Join(s.running[key], ""))
		delete(s.running, key)
	case e.Action == "skip" && e.Test != "":
		s.skipped(e.Package, e.Test, s.running[key])
		delete(s.running, key)
	case e.Action == "pass" || e.Action == "skip":
		delete(s.running, key)
	}
}

// logPrefix is what t.Log puts before a message: "    file_test.go:12: ".
var logPrefix = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// skipped records a skipped test under the last line it logged (t.Skip's
// message); a subtest skipped only because its parent was is not counted.
func (s *summarizer) skipped(pkg, test string, lines []string) {
	reason := ""
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "=== ") && !strings.HasPrefix(t, "--- ") {
			reason = logPrefix.ReplaceAllString(strings.TrimRight(l, "\n"), "")
		}
	}
	if reason == "" {
		reason = "(no reason given)"
	}
	k := s.skips[reason]
	if k == nil {
		k = &skip{reason: reason}
		s.skips[reason] = k
	}
	k.tests = append(k.tests, strings.TrimPrefix(pkg, "github.com/qhronos/qhronos/")+" "+test)
	s.total++
}

// summary prints the skipped tests, most common reason first, with a few
// of the tests each.
func (s *summarizer) summary() {
	if s.total == 0 {
		fmt.Fprintln(s.out, "skipped: none")
		return
	}
	list := make([]*skip, 0, len(s.skips))
	for _, k := range s.skips {
		list = append(list, k)
	}
	sort.Slice(list, func(i, j int) bool {
		if len(list[i].tests) != len(list[j].tests) {
			return len(list[i].tests) > len(list[j].tests)
		}
		return list[i].reason < list[j].reason
	})
	fmt.Fprintf(s.out, "skipped: %d tests, for %d reasons (CI=1 turns a missing service or tool into a failure)\n", s.total, len(list))
	for _, k := range list {
		fmt.Fprintf(s.out, "%6d  %s\n", len(k.tests), k.reason)
		shown := k.tests
		if len(shown) > 3 {
			shown = shown[:3]
		}
		more := ""
		if n := len(k.tests) - len(shown); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		fmt.Fprintf(s.out, "        e.g. %s%s\n", strings.Join(shown, ", "), more)
	}
}
