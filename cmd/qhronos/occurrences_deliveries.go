package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newOccurrencesDeliveriesCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "deliveries OCCURRENCE_ID",
		Short: "List the deliveries of a fan-out occurrence, one per subscription",
		Long: `List the deliveries of an occurrence of an event that targets a topic: one row per subscription
that matched when it fired, filtered ones included, with its status (delivered, failed, pending,
filtered), its attempts, what the last one got back and when the next is due. Every page is read.
--output json carries each delivery's attempts; "qhronos occurrences replay ID --subscription SUB"
sends one subscription's delivery again.`,
		Example: `  qhronos occurrences deliveries 9c1d…
  qhronos occurrences deliveries 9c1d… -o json | jq -r '.[] | select(.status == "failed") | .subscription_id'`,
		Args: exactArgs("OCCURRENCE_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ds := []client.Delivery{}
			for d, err := range c.Occurrences.AllDeliveries(cmd.Context(), args[0]) {
				if err != nil {
					return err
				}
				ds = append(ds, d)
			}
			t := &table{header: []string{"SUBSCRIPTION", "ENDPOINT", "STATUS", "ATTEMPTS", "LAST CODE/ERROR", "NEXT"},
				zone: a.localZone()}
			for i := range ds {
				d := &ds[i]
				t.add(d.SubscriptionID, str(d.EndpointID), string(d.Status), fmt.Sprint(len(d.Attempts)), lastResult(d),
					t.zone.when(d.NextAttemptAt))
			}
			return a.render(ds, t)
		},
	}
}

// lastResult is what a delivery's last attempt got: its HTTP status, else
// its error (cut short: --output json has it whole), else the delivery's.
func lastResult(d *client.Delivery) string {
	errText := d.Error
	if n := len(d.Attempts); n > 0 {
		last := d.Attempts[n-1]
		if last.StatusCode != nil {
			return fmt.Sprint(*last.StatusCode)
		}
		if last.Error != nil && *last.Error != "" {
			errText = last.Error
		}
	}
	if errText == nil || *errText == "" {
		return "-"
	}
	return truncate(*errText, 60)
}
