package main

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newStatsCmd(a *app) *cobra.Command {
	var since, until string
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Occurrences by status and action, delivery durations and lateness, backlog",
		Example: `  qhronos stats
  qhronos stats --since 2030-01-01T00:00:00Z --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var p client.StatsParams
			var err error
			if p.Since, err = timeFlag("since", since); err != nil {
				return err
			}
			if p.Until, err = timeFlag("until", until); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			st, err := c.Stats(cmd.Context(), p)
			if err != nil {
				return err
			}
			t := &table{header: []string{"ACTION", "OCCURRENCES", "BY STATUS", "ATTEMPTS", "P50 MS", "P95 MS", "LATE P95 MS", "DUE", "RETRYING"}}
			row := func(name string, occ, attempts, due, retrying *int, byStatus map[string]int, p50, p95, late95 string) {
				t.add(name, num(occ), statusCounts(byStatus), num(attempts), p50, p95, late95, num(due), num(retrying))
			}
			tot := st.Total
			row("all", tot.Occurrences, tot.Attempts, tot.Due, tot.Retrying, tot.ByStatus,
				pct(tot.DurationMs, 50), pct(tot.DurationMs, 95), pct(tot.LatenessMs, 95))
			names := make([]string, 0, len(st.ByAction))
			for n := range st.ByAction {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				b := st.ByAction[n]
				row(n, b.Occurrences, b.Attempts, b.Due, b.Retrying, b.ByStatus,
					pct(b.DurationMs, 50), pct(b.DurationMs, 95), pct(b.LatenessMs, 95))
			}
			return a.render(st, t)
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "window start (RFC 3339 or \"in 2 hours\"; default 24 h ago)")
	cmd.Flags().StringVar(&until, "until", "", "window end (RFC 3339 or \"in 2 hours\"; default now)")
	cmd.AddCommand(newStatsPunctualityCmd(a))
	return cmd
}

func statusCounts(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s=%d", k, m[k])
	}
	return s
}

// pct reads a percentile of one of the generated {count,p50,p95,p99}
// objects, which have no named type.
func pct(d any, p int) string {
	var s struct {
		Count int `json:"count"`
		P50   int `json:"p50"`
		P95   int `json:"p95"`
		P99   int `json:"p99"`
	}
	b, err := json.Marshal(d)
	if err != nil || json.Unmarshal(b, &s) != nil || s.Count == 0 {
		return "-"
	}
	switch p {
	case 50:
		return fmt.Sprint(s.P50)
	case 95:
		return fmt.Sprint(s.P95)
	}
	return fmt.Sprint(s.P99)
}
