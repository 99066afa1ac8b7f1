package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	t.Parallel()
	info := func(main string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: main}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	const rev = "0123456789abcdef0123"
	tests := []struct {
		name    string
		v, c, d string
		read    func() (*debug.BuildInfo, bool)
		want    string // the line's start
	}{
		{name: "release ldflags win over build info", v: "v1.4.0", c: rev, d: "2026-11-25T19:00:00Z",
			read: info("v0.0.0-20261125190000-0123456789ab"),
			want: "v1.4.0 (commit 0123456789ab, built 2026-11-25T19:00:00Z, go1.26.8 "},
		{name: "go install @version", read: info("v1.3.0"), want: "v1.3.0 (commit unknown, go1.26.8 "},
		{name: "checkout build: Go's pseudo-version, commit and its date",
			read: info("v0.0.0-20261125190000-0123456789ab", "vcs.revision", rev, "vcs.time", "2026-11-25T19:00:00Z", "vcs.modified", "false"),
			want: "v0.0.0-20261125190000-0123456789ab (commit 0123456789ab, committed 2026-11-25T19:00:00Z, go1.26.8 "},
		{name: "checkout with changes",
			read: info("v0.0.0-20261125190000-0123456789ab+dirty", "vcs.revision", rev, "vcs.modified", "true"),
			want: "v0.0.0-20261125190000-0123456789ab+dirty (commit 0123456789ab with uncommitted changes, go1.26.8 "},
		{name: "older Go or -buildvcs=false", read: info("(devel)"), want: "dev (commit unknown, go1.26.8 "},
		{name: "no build info", read: none, want: "dev (commit unknown, go"},
	}
	for _, tc := range tests {
		got := get(tc.v, tc.c, tc.d, tc.read).String()
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q…", tc.name, got, tc.want)
		}
	}
}
