package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newRunsCmd(a *app) *cobra.Command {
	cmd := group("runs", "Report how the runs of callback events end",
		newRunsCompleteCmd(a), newRunsHeartbeatCmd(a))
	cmd.Aliases = []string{"run"}
	cmd.Long = `An event created with --completion callback does not complete when its receiver answers:
the 2xx starts a run (the occurrence is running) that the receiver ends with "runs complete",
or keeps alive with "runs heartbeat", before the event's --max-runtime passes (else the
occurrence ends timed_out).

Both take the delivery's run token (its Qhronos-Run-Token header, payload run.token) from
--run-token or QHRONOS_RUN_TOKEN, or else the configured token, which must be allowed to
write the event.`
	cmd.Example = `  qhronos events create --name export --start "in 1 minute" --webhook https://jobs.example.com/export \
      --completion callback --max-runtime 30m
  QHRONOS_RUN_TOKEN=qrun_… qhronos runs heartbeat 9c1d…
  QHRONOS_RUN_TOKEN=qrun_… qhronos runs complete 9c1d… --status succeeded --run-output '{"rows":42}'`
	return cmd
}

func newRunsCompleteCmd(a *app) *cobra.Command {
	var status, output, runToken string
	cmd := &cobra.Command{
		Use:   "complete OCCURRENCE_ID --status succeeded|failed",
		Short: "Report that a callback run ended: succeeded completes the occurrence, failed fails it",
		Long: `complete ends the run a callback event's delivery started. --status succeeded completes the
occurrence, failed fails it. --run-output is any JSON (at most 16 KB), kept, redacted, as the
occurrence's run output; @FILE reads it from a file, @- from stdin.

It authenticates with the run token (--run-token, else QHRONOS_RUN_TOKEN), else with the
configured token. The same report again is accepted as the first was, so a script may repeat
it; a different report after the run ended, or any after it timed out, is refused (HTTP 409).`,
		Example: `  qhronos runs complete 9c1d… --status succeeded --run-output '{"rows":42}' --run-token "$RUN_TOKEN"
  QHRONOS_RUN_TOKEN=qrun_… qhronos runs complete 9c1d… --status failed --run-output @error.json
  qhronos runs complete 9c1d… --status failed   # with the configured token`,
		Args: exactArgs("OCCURRENCE_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			report := client.RunReport{Status: client.RunReportStatus(status)}
			if !report.Status.Valid() {
				return usagef("--status: succeeded or failed, got %q", status)
			}
			if cmd.Flags().Changed("run-output") {
				raw, err := jsonFlag("run-output", output, a.stdin)
				if err != nil {
					return err
				}
				report.Output = raw
			}
			return a.reportRun(cmd.Context(), runToken, func(c *client.Client, opts []client.CallOption) (*client.Occurrence, error) {
				return c.Occurrences.Complete(cmd.Context(), args[0], report, opts...)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&status, "status", "", "how the run ended: succeeded or failed (required)")
	f.StringVar(&output, "run-output", "", "the run's output as JSON, @FILE or @- for stdin (at most 16 KB)")
	f.StringVar(&runToken, "run-token", "", "the delivery's run token (env QHRONOS_RUN_TOKEN; prefer the environment: flags show in ps)")
	return cmd
}

func newRunsHeartbeatCmd(a *app) *cobra.Command {
	var runToken string
	cmd := &cobra.Command{
		Use:   "heartbeat OCCURRENCE_ID",
		Short: "Say a callback run is still alive: its deadline moves to now plus the event's max runtime",
		Long: `heartbeat keeps a long run from timing out: its deadline moves to now plus the event's
--max-runtime (the answer's RUN DEADLINE). It authenticates as "runs complete" does. A run that
is over (completed, failed, timed out or cancelled) is refused (HTTP 409).`,
		Example: `  QHRONOS_RUN_TOKEN=qrun_… qhronos runs heartbeat 9c1d…
  qhronos runs heartbeat 9c1d… --output json   # with the configured token`,
		Args: exactArgs("OCCURRENCE_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.reportRun(cmd.Context(), runToken, func(c *client.Client, opts []client.CallOption) (*client.Occurrence, error) {
				return c.Occurrences.Heartbeat(cmd.Context(), args[0], opts...)
			})
		},
	}
	cmd.Flags().StringVar(&runToken, "run-token", "", "the delivery's run token (env QHRONOS_RUN_TOKEN; prefer the environment: flags show in ps)")
	return cmd
}

// reportRun makes one run call, with the run token (--run-token, else
// QHRONOS_RUN_TOKEN) when there is one and the configured credentials
// otherwise, and shows the occurrence it answers.
func (a *app) reportRun(ctx context.Context, runToken string,
	call func(c *client.Client, opts []client.CallOption) (*client.Occurrence, error)) error {
	if runToken == "" {
		runToken = a.getenv("QHRONOS_RUN_TOKEN")
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	if runToken == "" {
		o, err := call(c, nil)
		if err != nil {
			return err
		}
		return a.renderOccurrence(ctx, c, o)
	}
	o, err := call(c, []client.CallOption{client.RunToken(runToken)})
	var apiErr *client.APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusUnauthorized {
		// The usual advice (--token, qhronos login) is beside the point.
		return fmt.Errorf("%s (HTTP 401); a run token reports only the occurrence whose delivery carried it", apiErr.Message)
	}
	if err != nil {
		return err
	}
	// A run token reads nothing else, not even the event whose zone the
	// table would use: the local zone it is.
	return a.render(o, occurrenceTable(a.localZone(), o))
}

// jsonFlag is a flag's JSON value: given inline, or read from a file
// (@FILE) or stdin (@-).
func jsonFlag(name, value string, stdin io.Reader) (json.RawMessage, error) {
	raw := []byte(value)
	if path, ok := strings.CutPrefix(value, "@"); ok {
		var err error
		if path == "-" {
			raw, err = io.ReadAll(stdin)
		} else {
			raw, err = os.ReadFile(path)
		}
		if err != nil {
			return nil, usagef("--%s: %v", name, err)
		}
	}
	if !json.Valid(raw) {
		return nil, usagef("--%s: not valid JSON", name)
	}
	return raw, nil
}
