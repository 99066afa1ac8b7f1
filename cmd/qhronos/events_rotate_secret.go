package main

import (
	"time"

	"github.com/spf13/cobra"
)

func newEventsRotateSecretCmd(a *app) *cobra.Command {
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "rotate-secret EVENT_ID",
		Short: "Issue a new signing secret; the previous one keeps signing until the grace ends",
		Long: `rotate-secret issues a new signing secret for the event and shows it once, in this answer only.
The secret in force until now (the event's own, or the server's default secret) keeps signing
until the grace ends: deliveries carry both in webhook-signature, the previous one in
X-Qhronos-Signature and the new one in X-Qhronos-Signature-New. Give your receiver the new secret
(a Verifier may hold both) before the grace ends; then X-Qhronos-Signature switches to it.`,
		Example: `  qhronos events rotate-secret 3f2b…
  qhronos events rotate-secret 3f2b… --grace 1h -o json | jq -r .hmac_secret`,
		Args: exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if grace < 0 {
				return usagef("--grace: must not be negative")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			rot, err := c.Events.RotateSecret(cmd.Context(), args[0], grace)
			if err != nil {
				return err
			}
			z := a.localZone()
			t := fields("event", rot.EventID, "secret", rot.HmacSecret, "previous until", z.when(rot.PreviousSecretExpiresAt))
			t.zone = z
			t.add("", "(shown once: store it now)")
			return a.render(rot, t)
		},
	}
	cmd.Flags().DurationVar(&grace, "grace", 0, "how long the previous secret keeps signing (default: the server's, 24h)")
	return cmd
}
