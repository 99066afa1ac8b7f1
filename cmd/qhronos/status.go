package main

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"
)

func newStatusCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the server's state: version, backends, queue, background loops",
		Example: `  qhronos status
  qhronos status --server http://127.0.0.1:8080 --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			st, err := c.Status(cmd.Context())
			if err != nil {
				return err
			}
			t := fields("status", string(st.Status), "version", st.Version, "instance", st.InstanceID, "uptime", str(st.Uptime))
			keys := func(m map[string]any) []string {
				out := make([]string, 0, len(m))
				for k := range m {
					out = append(out, k)
				}
				sort.Strings(out)
				return out
			}
			for _, k := range keys(st.Backends) {
				t.add("BACKEND "+k+":", fmt.Sprint(st.Backends[k]))
			}
			if len(st.Queue) > 0 {
				t.add("QUEUE:", statusCounts(st.Queue))
			}
			for _, k := range keys(st.Scheduler) {
				loop, _ := st.Scheduler[k].(map[string]any)
				state := "ok"
				if loop["healthy"] == false {
					state = "unhealthy"
				}
				if e, ok := loop["error"].(string); ok && e != "" {
					state += ": " + e
				}
				t.add("LOOP "+k+":", fmt.Sprintf("%s (runs %v)", state, loop["runs"]))
			}
			return a.render(st, t)
		},
	}
}
