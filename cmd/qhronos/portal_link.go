package main

import (
	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newPortalLinkCmd(a *app) *cobra.Command {
	var tags []string
	var expiresIn, returnURL string
	cmd := &cobra.Command{
		Use:   "portal-link",
		Short: "Make a one-time link to the portal: the console reduced to one customer's tags",
		Long: `portal-link makes a link (POST /portal-links) that signs in once, before it expires, to the
portal: the console's Endpoints, Subscriptions, Topics and Failures pages limited to what
carries one of the tags, where your customer manages their own endpoints and subscriptions,
sees their deliveries and replays the failed ones. Hand the URL to that customer (or open it
in an iframe of your application, see console.portal.frame_ancestors); it is shown once.
Your token needs write access and every tag in its scope.`,
		Example: `  qhronos portal-link --tag customer-42
  qhronos portal-link --tag customer-42 --expires-in 15m --return-url https://app.example.com/settings
  qhronos portal-link --tag customer-42 -o json | jq -r .url`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(tags) == 0 {
				return usagef("--tag: at least one, the tags the portal is limited to")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			in := client.PortalLinkRequest{Tags: tags, ExpiresIn: &expiresIn}
			if returnURL != "" {
				in.ReturnURL = &returnURL
			}
			link, err := c.PortalLinks.Create(cmd.Context(), in)
			if err != nil {
				return err
			}
			z := a.localZone()
			t := fields("url", link.URL, "expires", z.when(&link.ExpiresAt))
			t.zone = z
			t.add("", "(signs in once: hand it over now)")
			return a.render(link, t)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&tags, "tag", nil, "a tag the portal is limited to (repeat, or comma-separate, for several)")
	f.StringVar(&expiresIn, "expires-in", "1h", "how long the link and its session last: 15m, 1h, up to 24h")
	f.StringVar(&returnURL, "return-url", "", "your application's page the portal links back to")
	return cmd
}
