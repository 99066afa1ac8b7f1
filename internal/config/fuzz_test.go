package config

import (
	"testing"
)

// FuzzParseDuration checks the day-aware parser never panics and that what
// it accepts survives a FormatDuration round trip (config.yaml writes that
// form). Seeds also live in testdata/fuzz/FuzzParseDuration.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30s", "30d", "1d12h", "-2d", "0", "abc", "9223372036854775807ns", "106751d23h47m16s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		back, err := ParseDuration(FormatDuration(d))
		if err != nil || back != d {
			t.Fatalf("round trip %q → %s → %q → %s, %v", s, d, FormatDuration(d), back, err)
		}
	})
}

// FuzzApplyYAML checks that no config file, however malformed, panics the
// loader: it returns settings, warnings or an error.
func FuzzApplyYAML(f *testing.F) {
	for _, s := range []string{
		"server:\n  addr: 127.0.0.1:1\n",
		"scheduler:\n  lookahead: 30d\n  workers: 3\n",
		"outbound:\n  allow_cidrs: [10.0.0.0/8, ::1]\n",
		"a: &x {b: *x}\n",
		"server: [\n",
		"- 1\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := Default()
		_, _ = applyYAML(cfg, data, "fuzz.yaml")
	})
}
