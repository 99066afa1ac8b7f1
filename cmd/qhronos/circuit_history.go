package main

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newEndpointsCircuitHistoryCmd(a *app) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "circuit-history ENDPOINT_ID",
		Short: "Show an endpoint's circuit transitions, newest first: opened, reopened, closed, disabled, enabled",
		Example: `  qhronos endpoints circuit-history 5c9d…
  qhronos endpoints circuit-history 5c9d… --limit 500 --output json`,
		Args: exactArgs("ENDPOINT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			entries := []client.CircuitEntry{}
			p := client.CircuitHistoryParams{Limit: client.Ptr(min(limit, 500))}
			for e, err := range c.Endpoints.AllCircuitHistory(cmd.Context(), args[0], p) {
				if err != nil {
					return err
				}
				entries = append(entries, e)
				if len(entries) >= limit {
					break
				}
			}
			t := &table{header: []string{"AT", "CHANGE", "FROM", "TO", "FAILURES", "WHO", "REASON"}}
			for _, e := range entries {
				who := e.Subject
				if who != "" && e.Channel != "" {
					who += " (" + e.Channel + ")"
				}
				t.add(e.At.UTC().Format(time.RFC3339), string(e.Change), string(e.FromState), string(e.ToState),
					strconv.Itoa(e.ConsecutiveFailures), who, e.Reason)
			}
			return a.render(entries, t)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "show at most this many entries (the server keeps the newest 200)")
	return cmd
}
