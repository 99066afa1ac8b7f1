// Package buildinfo says which build of Qhronos is running: the version,
// commit and build date a release stamps with -ldflags, else what the Go
// toolchain recorded in the binary (module version or pseudo-version, VCS
// revision, commit time and whether the tree had uncommitted changes).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by `make release` / the Dockerfile:
//
//	-X github.com/qhronos/qhronos/internal/buildinfo.version=v1.2.3
//	-X github.com/qhronos/qhronos/internal/buildinfo.commit=<sha>
//	-X github.com/qhronos/qhronos/internal/buildinfo.date=<RFC 3339>
var version, commit, date string

// Info describes one build.
type Info struct {
	Version   string // v1.2.3, a pseudo-version (v0.0.0-20261125193347-f8ad082abcde+dirty) or "dev"
	Commit    string // VCS revision, shortened to 12 characters; "" when unknown
	Dirty     bool   // built from a tree with uncommitted changes
	Built     string `json:"built,omitempty"`     // build date a release stamps; "" otherwise
	Committed string `json:"committed,omitempty"` // commit date Go records for a checkout build; "" otherwise
	Go        string `json:"go"`                  // toolchain, e.g. go1.26.8
}

// Get reports the running binary's build.
func Get() Info { return get(version, commit, date, debug.ReadBuildInfo) }

// get is Get with its inputs injected, for tests.
func get(v, c, d string, read func() (*debug.BuildInfo, bool)) Info {
	info := Info{Version: v, Commit: short(c), Built: d, Go: runtime.Version()}
	bi, ok := read()
	if ok {
		info.Go = bi.GoVersion
	}
	if v != "" { // stamped by a release build: it knows best
		return info
	}
	info.Version = "dev"
	if !ok {
		return info
	}
	// `go install …@v1.2.3` records the module version; since Go 1.24 a
	// build inside a checkout records a pseudo-version from the VCS state.
	if m := bi.Main.Version; m != "" && m != "(devel)" {
		info.Version = m
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = short(s.Value)
		case "vcs.time":
			info.Committed = s.Value
		case "vcs.modified":
			info.Dirty = s.Value == "true"
		}
	}
	return info
}

func short(rev string) string { return rev[:min(12, len(rev))] }

// String is one line for `version` commands, e.g.
// "v1.2.3 (commit 0123456789ab, built 2026-11-25T19:00:00Z, go1.26.8 linux/amd64)".
func (i Info) String() string {
	var parts []string
	switch {
	case i.Commit == "":
		parts = append(parts, "commit unknown")
	case i.Dirty:
		parts = append(parts, "commit "+i.Commit+" with uncommitted changes")
	default:
		parts = append(parts, "commit "+i.Commit)
	}
	if i.Built != "" {
		parts = append(parts, "built "+i.Built)
	}
	if i.Committed != "" {
		parts = append(parts, "committed "+i.Committed)
	}
	parts = append(parts, i.Go+" "+runtime.GOOS+"/"+runtime.GOARCH)
	return fmt.Sprintf("%s (%s)", i.Version, strings.Join(parts, ", "))
}
