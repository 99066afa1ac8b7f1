package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newOccurrencesAttemptsCmd(a *app) *cobra.Command {
	var showRequest bool
	cmd := &cobra.Command{
		Use:   "attempts OCCURRENCE_ID",
		Short: "List the delivery attempts of an occurrence",
		Long: "List the delivery attempts of an occurrence. --show-request adds, below the table, the request each\n" +
			"attempt sent (method, URL, headers, body), secrets redacted as the API answers them; --output json\n" +
			"always carries it as each attempt's \"request\".",
		Example: `  qhronos occurrences attempts 9c1d…
  qhronos occurrences attempts 9c1d… --show-request`,
		Args: exactArgs("OCCURRENCE_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			atts, err := c.Occurrences.Attempts(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if atts == nil {
				atts = []client.Attempt{}
			}
			t := &table{header: []string{"ATTEMPT", "STARTED", "DURATION", "CODE", "OUTCOME", "MANUAL", "ERROR"}}
			for _, at := range atts {
				dur := "-"
				if at.DurationMs != nil {
					dur = (time.Duration(*at.DurationMs) * time.Millisecond).String()
				}
				t.add(fmt.Sprint(at.Attempt), at.StartedAt.UTC().Format(time.RFC3339), dur, num(at.StatusCode),
					at.Outcome, flag(at.Manual), str(at.Error))
			}
			if err := a.render(atts, t); err != nil || !showRequest || a.output == "json" {
				return err
			}
			for _, at := range atts {
				a.renderRequest(at)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&showRequest, "show-request", false, "also print the request each attempt sent")
	return cmd
}

// renderRequest prints the request an attempt sent, headers sorted by
// name, every line made printable.
func (a *app) renderRequest(at client.Attempt) {
	w := a.stdout
	fmt.Fprintf(w, "\nATTEMPT %d REQUEST:", at.Attempt)
	r := at.Request
	if r == nil {
		fmt.Fprintln(w, " not recorded")
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, printable(r.Method+" "+r.URL))
	names := make([]string, 0, len(r.Headers))
	for name := range r.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintln(w, printable(name+": "+r.Headers[name]))
	}
	if r.Body != "" {
		fmt.Fprintln(w)
		for _, line := range strings.Split(r.Body, "\n") {
			fmt.Fprintln(w, printable(line))
		}
	}
	if r.BodyTruncated {
		fmt.Fprintln(w, "(body cut: only its first 64 KiB are kept)")
	}
}
