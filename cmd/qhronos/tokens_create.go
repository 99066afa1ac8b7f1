package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/input"
)

func newTokensCreateCmd(a *app) *cobra.Command {
	var sub, access, expires string
	var scope []string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Mint a JWT; it is shown once, in this answer only",
		Example: `  qhronos tokens create --sub ci --access write --scope billing,ops --expires 30d
  qhronos tokens create --sub oncall --access read --scope ops --expires "in 8 hours"
  qhronos tokens create --sub dev --access read --scope dev --expires 2030-12-31T00:00:00Z -o json | jq -r .token`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if sub == "" {
				return usagef("--sub: required")
			}
			switch access {
			case "read", "write", "admin", "read_write":
			default:
				return usagef("--access: must be read, write or admin, got %q", access)
			}
			exp, err := parseExpiry(expires, time.Now())
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			tok, err := c.Tokens.Create(cmd.Context(), client.TokenRequest{Type: client.Ptr(client.TokenRequestTypeJwt),
				Sub: sub, Access: client.TokenRequestAccess(access), Scope: scope, ExpiresAt: exp})
			if err != nil {
				return err
			}
			z := a.localZone()
			t := fields("id", tok.ID, "sub", tok.Sub, "access", tok.Access, "scope", list(tok.Scope),
				"expires", z.when(&tok.ExpiresAt), "token", str(tok.Token))
			t.zone = z
			t.add("", "(shown once: store it now)")
			return a.render(tok, t)
		},
	}
	f := cmd.Flags()
	f.StringVar(&sub, "sub", "", "subject: who the token is for (a client-hook may use its subject as client name)")
	f.StringVar(&access, "access", "read", "read, write or admin")
	f.StringSliceVar(&scope, "scope", nil, "tags the token may see and touch (empty: none unless admin)")
	f.StringVar(&expires, "expires", "720h", "lifetime (24h, 30d) or expiry instant (RFC 3339, \"tomorrow at 9am\", \"in 2 hours\")")
	return cmd
}

// parseExpiry reads a lifetime ("720h", "30d") or an instant in any form
// the server's instant parser takes (RFC 3339, "in 2 hours", "tomorrow at
// 9am" in the local zone), as every other time flag does.
func parseExpiry(v string, now time.Time) (time.Time, error) {
	if d, err := input.Duration(v); err == nil {
		if d <= 0 {
			return time.Time{}, usagef("--expires: must be in the future")
		}
		return now.Add(d).UTC().Truncate(time.Second), nil
	}
	t, err := timeFlag("expires", v)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC().Truncate(time.Second), nil
}
