package main

import (
	"runtime/debug"
	"testing"
)

func TestStampedVersion(t *testing.T) {
	info := func(main string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Version: main}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	tests := []struct {
		name, set string
		read      func() (*debug.BuildInfo, bool)
		want      string
	}{
		{"ldflags win", "1.4.0", info("v1.3.0"), "1.4.0"},
		{"go install @version", "dev", info("v1.3.0"), "v1.3.0"},
		{"checkout build", "dev", info("(devel)", "vcs.revision", "0123456789abcdef0123", "vcs.modified", "false"), "dev+0123456789ab"},
		{"checkout with changes", "dev", info("(devel)", "vcs.revision", "0123456789abcdef0123", "vcs.modified", "true"), "dev+0123456789ab-dirty"},
		{"no vcs information", "dev", info("(devel)"), "dev"},
		{"no build info", "dev", none, "dev"},
	}
	for _, tc := range tests {
		if got := stampedVersion(tc.set, tc.read); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
