package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// qhronosd version prints the build it is: version, commit (or "commit
// unknown") and toolchain; the details are internal/buildinfo's tests.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"version"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := out.String()
	if !strings.HasPrefix(got, "qhronosd "+version+" (commit ") || !strings.Contains(got, " go1.") {
		t.Errorf("qhronosd version = %q, want \"qhronosd %s (commit …, go1.…)\"", got, version)
	}
}
