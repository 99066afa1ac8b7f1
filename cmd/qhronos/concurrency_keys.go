package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newConcurrencyKeysCmd(a *app) *cobra.Command {
	cmd := group("concurrency-keys", "Inspect, pause and resume the concurrency keys events share a limit of runs in flight by",
		newConcurrencyKeysListCmd(a), newConcurrencyKeysGetCmd(a), newConcurrencyKeysPauseCmd(a),
		newConcurrencyKeysResumeCmd(a))
	cmd.Aliases = []string{"concurrency-key"}
	cmd.Long = `An event created with --concurrency-key KEY --concurrency-limit N shares KEY with every other
event naming it: at most N of their occurrences are in flight at once (being delivered, awaiting
an acknowledgement, running or retrying), across all instances; the others wait, pending with
reason concurrency_wait, oldest instant first. A key's limit is the smallest its events name, and
it exists while an event names it.`
	cmd.Example = `  qhronos events create --name sync --start "in 1 minute" --webhook https://jobs.example.com/sync \
      --concurrency-key customer-42 --concurrency-limit 2
  qhronos concurrency-keys list
  qhronos concurrency-keys pause customer-42`
	return cmd
}

func newConcurrencyKeysListCmd(a *app) *cobra.Command {
	var limit int
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the concurrency keys named by events you can read, in key order",
		Example: `  qhronos concurrency-keys list
  qhronos concurrency-keys list --all --output json | jq -r '.[] | select(.waiting > 0) | .key'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 {
				return usagef("--limit: must be at least 1")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			p := client.ListConcurrencyKeysParams{Limit: &limit}
			keys := []client.ConcurrencyKey{}
			if all {
				for k, err := range c.ConcurrencyKeys.All(cmd.Context(), p) {
					if err != nil {
						return err
					}
					keys = append(keys, k)
				}
			} else {
				page, err := c.ConcurrencyKeys.List(cmd.Context(), p)
				if err != nil {
					return err
				}
				keys = append(keys, page.Items...)
			}
			t := &table{header: []string{"KEY", "LIMIT", "IN FLIGHT", "WAITING", "PAUSED"}}
			for _, k := range keys {
				t.add(k.Key, strconv.Itoa(k.Limit), strconv.Itoa(k.InFlight), strconv.Itoa(k.Waiting), flag(&k.Paused))
			}
			return a.render(keys, t)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "page size (the server caps it at 500)")
	cmd.Flags().BoolVar(&all, "all", false, "follow the cursor through every page")
	return cmd
}

func newConcurrencyKeysGetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "get KEY",
		Short: "Show one concurrency key: its limit, occurrences in flight and waiting, and whether it is paused",
		Example: `  qhronos concurrency-keys get customer-42
  qhronos concurrency-keys get customer-42 --output json`,
		Args: exactArgs("KEY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.concurrencyKeyCall(args[0], func(c *client.Client) (*client.ConcurrencyKey, error) {
				return c.ConcurrencyKeys.Get(cmd.Context(), args[0])
			})
		},
	}
}

func newConcurrencyKeysPauseCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "pause KEY",
		Short: "Pause a concurrency key: no occurrence of its events starts; the runs in flight go on",
		Long: `pause holds back every event naming KEY at once: their due occurrences wait (pending, reason
concurrency_wait) until "concurrency-keys resume"; the runs in flight go on. A token limited to
tags needs write access to every event naming the key (HTTP 403 otherwise).`,
		Example: `  qhronos concurrency-keys pause customer-42`,
		Args:    exactArgs("KEY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.concurrencyKeyCall(args[0], func(c *client.Client) (*client.ConcurrencyKey, error) {
				return c.ConcurrencyKeys.Pause(cmd.Context(), args[0])
			})
		},
	}
}

func newConcurrencyKeysResumeCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "resume KEY",
		Short:   "Resume a concurrency key: its oldest waiting occurrences start at once, as many as it has room for",
		Example: `  qhronos concurrency-keys resume customer-42`,
		Args:    exactArgs("KEY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.concurrencyKeyCall(args[0], func(c *client.Client) (*client.ConcurrencyKey, error) {
				return c.ConcurrencyKeys.Resume(cmd.Context(), args[0])
			})
		},
	}
}

// concurrencyKeyCall makes one call answering key and shows the key. A key
// is not a stored resource of its own, so a 404 says what it means.
func (a *app) concurrencyKeyCall(key string, call func(c *client.Client) (*client.ConcurrencyKey, error)) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	k, err := call(c)
	if errors.Is(err, client.ErrNotFound) {
		return fmt.Errorf("concurrency key %q: no event your token can read names it: %w", key, client.ErrNotFound)
	}
	if err != nil {
		return err
	}
	z := a.localZone()
	t := fields("key", k.Key, "limit", strconv.Itoa(k.Limit), "in flight", strconv.Itoa(k.InFlight),
		"waiting", strconv.Itoa(k.Waiting), "paused", flag(&k.Paused), "paused at", z.when(k.PausedAt),
		"paused by", str(k.PausedBy))
	t.zone = z
	return a.render(k, t)
}
