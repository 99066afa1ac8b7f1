package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

// Exit codes scripts can rely on.
const (
	exitOK       = 0
	exitError    = 1
	exitUsage    = 2
	exitNotFound = 3
)

// app is what every command shares: streams, the environment and the
// global flags. Tests run commands in-process with their own.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	server, token, output string
	// utc shows every time in UTC (--utc) instead of the event's zone or
	// the local one.
	utc bool
}

// usageError is a mistake in the command line (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return &usageError{fmt.Errorf(format, args...)} }

// run executes one command line and returns its exit code.
func run(ctx context.Context, args []string, a *app) int {
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(a.stderr, "qhronos: "+printable(describe(err)))
	return exitCode(err)
}

func exitCode(err error) int {
	var ue *usageError
	switch {
	case errors.As(err, &ue), strings.HasPrefix(err.Error(), "unknown command"),
		strings.HasPrefix(err.Error(), "unknown flag"), strings.HasPrefix(err.Error(), "unknown shorthand flag"):
		return exitUsage
	case errors.Is(err, client.ErrNotFound):
		return exitNotFound
	default:
		return exitError
	}
}

// describe is the message for stderr: the server's own words, with the
// field a validation error names.
func describe(err error) string {
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		msg := fmt.Sprintf("%s (HTTP %d)", apiErr.Message, apiErr.StatusCode)
		if apiErr.Message == "" {
			msg = apiErr.Error()
		}
		if apiErr.Field != "" && !strings.HasPrefix(apiErr.Message, apiErr.Field) {
			msg = apiErr.Field + ": " + msg
		}
		if apiErr.StatusCode == 401 {
			msg += "; check --token, QHRONOS_TOKEN or `qhronos login`"
		}
		if apiErr.RetryAfter > 0 {
			msg += fmt.Sprintf("; retry after %s", apiErr.RetryAfter)
		}
		return msg
	}
	return err.Error()
}

// client builds the SDK client from the flags, the environment and the
// stored login, in that order.
func (a *app) client() (*client.Client, error) {
	server, token := a.server, a.token
	if server == "" {
		server = a.getenv("QHRONOS_SERVER")
	}
	if token == "" {
		token = a.getenv("QHRONOS_TOKEN")
	}
	if server == "" || token == "" {
		if saved, err := a.loadCredentials(); err == nil {
			if server == "" {
				server = saved.Server
			}
			if token == "" && (server == "" || strings.TrimRight(saved.Server, "/") == strings.TrimRight(server, "/")) {
				token = saved.Token
			}
		}
	}
	if server == "" {
		server = "http://127.0.0.1:8080"
	}
	c, err := client.New(server, client.WithToken(token), client.WithUserAgent("qhronos-cli"),
		client.WithVia("cli"))
	if err != nil {
		return nil, usagef("--server: %v", err)
	}
	return c, nil
}

// noArgs and exactArgs report a wrong argument count as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}

func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usagef("%s needs %s", cmd.CommandPath(), strings.Join(names, " "))
		}
		return nil
	}
}

// group is a parent command: without a known subcommand it is a usage error.
func group(use, short string, children ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			_ = cmd.Help()
			return usagef("%s needs a subcommand", cmd.CommandPath())
		}}
	cmd.AddCommand(children...)
	return cmd
}

// callOptions turns the optional --if-match and --idempotency-key flags into
// call options.
func callOptions(ifMatch, idempotencyKey string) []client.CallOption {
	var opts []client.CallOption
	if ifMatch != "" {
		opts = append(opts, client.IfMatch(ifMatch))
	}
	if idempotencyKey != "" {
		opts = append(opts, client.IdempotencyKey(idempotencyKey))
	}
	return opts
}
