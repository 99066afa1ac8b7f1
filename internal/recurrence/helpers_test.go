package recurrence

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func mustLoc(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func mustCompile(t testing.TB, spec Spec) *Rule {
	t.Helper()
	r, err := Compile(spec, Limits{})
	require.NoError(t, err, "compile %+v", spec)
	return r
}

func mustExpand(t testing.TB, r *Rule, from, to time.Time, limit int) []time.Time {
	t.Helper()
	got, err := Expand(r, from, to, limit)
	require.NoError(t, err)
	return got
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func formatAll(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.UTC().Format(time.RFC3339Nano)
	}
	return out
}
