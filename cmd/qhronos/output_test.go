package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

func TestPrintableEscapesWhatATerminalWouldAct(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"report", "report"},
		{"Zpráva 日報", "Zpráva 日報"},
		{"a\x1b]0;pwned\x07b", `a\x1b]0;pwned\ab`},
		{"red\x1b[31m", `red\x1b[31m`},
		{"tab\there\nline\r", `tab\there\nline\r`},
		{"del\x7f c1\u009b", `del\x7f c1\u009b`},
		{"bidi\u202eevil", `bidi\u202eevil`},
		{"bad\xffutf8", `bad\xffutf8`},
	} {
		require.Equal(t, tc.want, printable(tc.in), "printable(%q)", tc.in)
	}
}

// TestTablesEscapeControlCharacters: an event named with terminal escape
// sequences prints them escaped in get and list tables, never raw.
func TestTablesEscapeControlCharacters(t *testing.T) {
	t.Parallel()
	srv := qhronostest.Start(t, qhronostest.SQLite)
	e := serverEnv(t, srv)
	rc := qhronostest.NewReceiver(t)
	tag := "esc-" + qhronostest.RandomHex(t, 4)
	name := "ok\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u202eevil"
	var ev client.Event
	ok(t, e, &ev, "events", "create", "--name", name, "--start", "in 1 hour", "--webhook", rc.URL, "--tag", tag)
	require.Equal(t, name, ev.Name, "the name is stored as given")
	for _, args := range [][]string{{"events", "get", ev.ID}, {"events", "list", "--tag", tag}} {
		r := cli(t, e, "", args...)
		require.Equal(t, 0, r.code, r.stderr)
		require.NotContains(t, r.stdout, "\x1b", "%v prints a raw escape", args)
		require.NotContains(t, r.stdout, "\x07", "%v prints a raw BEL", args)
		require.NotContains(t, r.stdout, "\u202e", "%v prints a raw bidi override", args)
		require.Contains(t, r.stdout, `ok\x1b]52;c;cm0gLXJmIH4=\a\x1b[2J\u202eevil`, "%v", args)
	}
}
