// Command qhronosd is the Qhronos server: `serve` (the default), `migrate`
// and `version`. It only wires packages together and owns the signal
// context and the shutdown order.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	_ "time/tzdata" // zone data inside the binary, so minimal images work

	"github.com/qhronos/qhronos/internal/buildinfo"
	"github.com/qhronos/qhronos/internal/config"
)

// version names this build in /status, logs and the console: the release
// version stamped by -ldflags, else the module version or pseudo-version Go
// records (see internal/buildinfo).
var version = buildinfo.Get().Version

// gcPercent is qhronosd's garbage-collection target when GOGC is not set.
// Its live heap is small (tens of MB) while its work allocates briskly
// (JSON in and out of every request and row), so at Go's default of 100 it
// collects often under load: at 200, a million-event import spent 7 % less
// CPU in qhronosd for 35 MB more peak memory (BENCHMARKS.md, "A million in
// under a minute"). GOGC and GOMEMLIMIT rule when set.
const gcPercent = 200

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: qhronosd [serve|migrate [up|status]|version] [flags]

  serve     run the server (default)
  migrate   apply pending database migrations (up, default) or list them (status)
  version   print the version, commit and build date

Flags (every setting can also come from config.yaml or QHRONOS_* variables):
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(ctx, args, stderr)
	case "migrate":
		err = migrate(ctx, args, stdout, stderr)
	case "version":
		_, _ = fmt.Fprintln(stdout, "qhronosd", buildinfo.Get())
	case "help", "-h", "--help":
		printUsage(stdout)
	default:
		_, _ = fmt.Fprintf(stderr, "qhronosd: unknown command %q\n", cmd)
		printUsage(stderr)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout)
		return 0
	}
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "qhronosd:", err)
		return 1
	}
	return 0
}

func printUsage(w io.Writer) {
	_, _ = fmt.Fprint(w, usage, config.Usage())
}
