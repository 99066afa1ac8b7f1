// Command qhronos is the command-line client of Qhronos: events,
// occurrences, tokens, stats, schedule previews, signature checks and
// `qhronos listen`, which forwards deliveries to a local receiver.
//
//	go install ./cmd/qhronos   (from a clone; or take it from a release archive)
//
// Exit codes: 0 ok, 1 error, 2 usage, 3 not found.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(code)
}
