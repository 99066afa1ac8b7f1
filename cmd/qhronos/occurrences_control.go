package main

import (
	"github.com/spf13/cobra"
)

func newOccurrencesSkipCmd(a *app) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "skip OCCURRENCE_ID",
		Short: "Skip one occurrence that has not fired yet (it stays skipped, reason manual)",
		Example: `  qhronos occurrences skip 9c1d… --reason "public holiday"
  qhronos occurrences unskip 9c1d…`,
		Args: exactArgs("OCCURRENCE_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			o, err := c.Occurrences.Skip(cmd.Context(), args[0], reason)
			if err != nil {
				return err
			}
			return a.renderOccurrence(cmd.Context(), c, o)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (kept with the event's exceptions and history)")
	return cmd
}

func newOccurrencesUnskipCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "unskip OCCURRENCE_ID",
		Short:   "Undo a skip while the occurrence's instant is still ahead",
		Example: `  qhronos occurrences unskip 9c1d…`,
		Args:    exactArgs("OCCURRENCE_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			o, err := c.Occurrences.Unskip(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.renderOccurrence(cmd.Context(), c, o)
		},
	}
}

func newOccurrencesMoveCmd(a *app) *cobra.Command {
	var to, reason string
	cmd := &cobra.Command{
		Use:     "move OCCURRENCE_ID --to TIME",
		Short:   "Move one occurrence that has not fired to another future moment, keeping its id",
		Example: `  qhronos occurrences move 9c1d… --to 2030-03-15T10:30:00Z --reason "after the release"`,
		Args:    exactArgs("OCCURRENCE_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			at, err := timeFlag("to", to)
			if err != nil {
				return err
			}
			if at == nil {
				return usagef("move: --to is required")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			o, err := c.Occurrences.Move(cmd.Context(), args[0], *at, reason)
			if err != nil {
				return err
			}
			return a.renderOccurrence(cmd.Context(), c, o)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the new instant (RFC 3339, or \"in 2 hours\", \"tomorrow at 9am\")")
	cmd.Flags().StringVar(&reason, "reason", "", "why")
	return cmd
}
