package main

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newLoginCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "login --server URL",
		Short: "Check a token against a server and store both for later commands",
		Long: `login reads the token from QHRONOS_TOKEN, or else from the first line of standard input (never
from a flag, which would show in the process list and the shell history), checks it against
the server, and stores server and token in the user's config directory with mode 0600.`,
		Example: `  qhronos login --server http://127.0.0.1:8080 < token.txt
  QHRONOS_TOKEN=... qhronos login --server https://qhronos.example.com
  pass show qhronos | qhronos login --server https://qhronos.example.com`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.server == "" {
				a.server = a.getenv("QHRONOS_SERVER")
			}
			if a.server == "" {
				return usagef("--server: required (or QHRONOS_SERVER)")
			}
			token := a.token
			if token == "" {
				token = a.getenv("QHRONOS_TOKEN")
			}
			if token == "" {
				line, err := bufio.NewReader(a.stdin).ReadString('\n')
				if err != nil && line == "" {
					return usagef("token: none given; pipe it on standard input or set QHRONOS_TOKEN")
				}
				token = strings.TrimSpace(line)
			}
			if token == "" {
				return usagef("token: empty")
			}
			c, err := client.New(a.server, client.WithToken(token), client.WithUserAgent("qhronos-cli"),
				client.WithVia("cli"))
			if err != nil {
				return usagef("--server: %v", err)
			}
			if _, err := c.Events.List(cmd.Context(), client.ListEventsParams{Limit: client.Ptr(1)}); err != nil {
				return fmt.Errorf("check the token against %s: %w", a.server, err)
			}
			path, err := a.saveCredentials(credentials{Server: c.BaseURL(), Token: token})
			if err != nil {
				return err
			}
			return a.render(map[string]string{"server": c.BaseURL(), "credentials": path},
				&table{rows: [][]string{{"Logged in to " + c.BaseURL() + "; credentials saved to " + path}}})
		},
	}
}
