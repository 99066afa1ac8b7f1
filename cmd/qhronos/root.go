package main

import (
	"github.com/spf13/cobra"
)

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "qhronos",
		Short: "Command-line client of the Qhronos scheduling server",
		Long: `qhronos talks to a Qhronos server: create and inspect events and their occurrences, mint
tokens, preview schedules, check webhook signatures, and forward deliveries to a local
receiver with "qhronos listen".

The server and token come from --server/--token, else QHRONOS_SERVER/QHRONOS_TOKEN, else
what "qhronos login" saved. Exit codes: 0 ok, 1 error, 2 usage, 3 not found.`,
		Example: `  qhronos login --server http://127.0.0.1:8080 < token.txt
  qhronos events create --name ping --start "in 1 minute" --webhook http://127.0.0.1:3000/hooks
  qhronos events list --tag billing --output json
  qhronos listen --client dev --forward-to http://localhost:3000/hooks`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			switch a.output {
			case "table", "json":
				return nil
			}
			return usagef("--output: must be table or json, got %q", a.output)
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&a.server, "server", "", "server URL (env QHRONOS_SERVER; default http://127.0.0.1:8080)")
	f.StringVar(&a.token, "token", "", "API token (env QHRONOS_TOKEN; prefer the environment: flags show in ps)")
	f.StringVarP(&a.output, "output", "o", "table", "output format: table or json")
	f.BoolVar(&a.utc, "utc", false, "show times in UTC (tables show an event's times in its zone, lists in the local zone, TZ)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.AddCommand(
		newLoginCmd(a),
		newEventsCmd(a),
		newCalendarsCmd(a),
		newEndpointsCmd(a),
		newConcurrencyKeysCmd(a),
		newTopicsCmd(a),
		newSubscriptionsCmd(a),
		newOccurrencesCmd(a),
		newRunsCmd(a),
		newTokensCmd(a),
		newPortalLinkCmd(a),
		newNotificationsCmd(a),
		newStatsCmd(a),
		newStatusCmd(a),
		newScheduleCmd(a),
		newVerifyCmd(a),
		newListenCmd(a),
		newVersionCmd(a),
	)
	return root
}
