package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// notifications create|get|update|delete manage channels: a webhook's
// secret is shown once, on create; --kind and --tag scope a channel (missed
// among the kinds), list shows KINDS and TAGS ("all" when empty), update
// changes only the flags given and --no-kinds / --no-tags clear them. A bad
// kind or tag is the server's 400 naming the field; a conflicting or
// missing flag is a usage error, a deleted channel exit 3.
func TestNotificationChannelCommands(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		var hook client.NotificationChannel
		ok(t, e, &hook, "notifications", "create", "--name", "ops", "--url", "https://ops.example.com/qhronos",
			"--kind", "missed", "--kind", "circuit_opened", "--tag", "billing")
		require.Equal(t, client.NotificationChannelTypeWebhook, hook.Type)
		require.Equal(t, []client.NotificationChannelKinds{client.NotificationChannelKindsMissed,
			client.NotificationChannelKindsCircuitOpened}, hook.Kinds)
		require.Equal(t, []string{"billing"}, hook.Tags)
		require.NotNil(t, hook.Secret)
		require.True(t, strings.HasPrefix(*hook.Secret, "whsec_"), *hook.Secret)
		require.True(t, hook.SecretSet)

		// The table shows the secret once, and says so; an email channel
		// (its type from --to) has none, and takes every notice.
		r := cli(t, e, "", "notifications", "create", "--name", "oncall", "--to", "oncall@example.com",
			"--to", "lead@example.com")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "email", field(t, r.stdout, "TYPE"))
		require.Equal(t, "oncall@example.com,lead@example.com", field(t, r.stdout, "TO"))
		require.Equal(t, "all", field(t, r.stdout, "KINDS"))
		require.Equal(t, "all", field(t, r.stdout, "TAGS"))
		require.NotContains(t, r.stdout, "SECRET")
		mail := field(t, r.stdout, "ID")
		r = cli(t, e, "", "notifications", "create", "--name", "signed", "--url", "https://ops.example.com/signed",
			"--secret", "a-long-enough-secret")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "a-long-enough-secret", field(t, r.stdout, "SECRET"))
		require.Contains(t, r.stdout, "(shown once")
		require.Equal(t, "yes", field(t, r.stdout, "SECRET SET"))
		signed := field(t, r.stdout, "ID")

		r = cli(t, e, "", "notifications", "list")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, []string{"ID", "NAME", "TYPE", "TO", "KINDS", "TAGS"}, strings.Fields(strings.Split(r.stdout, "\n")[0]))
		cells := row(t, r.stdout, hook.ID)
		require.Equal(t, []string{"ops", "webhook"}, cells[1:3])
		require.Equal(t, []string{"missed,circuit_opened", "billing"}, cells[4:])
		require.Equal(t, []string{mail, "oncall", "email", "oncall@example.com,lead@example.com", "all", "all"},
			row(t, r.stdout, mail))
		require.NotContains(t, r.stdout, "whsec_")
		require.NotContains(t, r.stdout, "a-long-enough-secret")

		// get never shows the secret again.
		r = cli(t, e, "", "notifications", "get", hook.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "billing", field(t, r.stdout, "TAGS"))
		require.Equal(t, "yes", field(t, r.stdout, "SECRET SET"))
		require.NotContains(t, r.stdout, *hook.Secret)
		var got client.NotificationChannel
		ok(t, e, &got, "notifications", "get", hook.ID)
		require.Nil(t, got.Secret)
		require.Equal(t, []string{"billing"}, got.Tags)

		// update sends only the flags given: more tags, then none; the
		// kinds stay until --no-kinds.
		var up client.NotificationChannel
		ok(t, e, &up, "notifications", "update", hook.ID, "--tag", "billing", "--tag", "ops")
		require.Equal(t, []string{"billing", "ops"}, up.Tags)
		require.Len(t, up.Kinds, 2)
		require.Equal(t, "ops", up.Name)
		var cleared client.NotificationChannel
		ok(t, e, &cleared, "notifications", "update", hook.ID, "--no-tags")
		require.Empty(t, cleared.Tags)
		require.Len(t, cleared.Kinds, 2, "kinds untouched")
		r = cli(t, e, "", "notifications", "list")
		require.Equal(t, []string{"missed,circuit_opened", "all"}, row(t, r.stdout, hook.ID)[4:])
		var all client.NotificationChannel
		ok(t, e, &all, "notifications", "update", hook.ID, "--no-kinds", "--name", "ops-eu")
		require.Empty(t, all.Kinds)
		require.Empty(t, all.Tags)
		require.Equal(t, "ops-eu", all.Name)
		r = cli(t, e, "", "notifications", "get", hook.ID)
		require.Equal(t, "all", field(t, r.stdout, "KINDS"))
		require.Equal(t, "all", field(t, r.stdout, "TAGS"))
		ok(t, e, &up, "notifications", "update", mail, "--kind", "missed", "--to", "ops@example.com")
		require.Equal(t, []client.NotificationChannelKinds{client.NotificationChannelKindsMissed}, up.Kinds)
		require.Equal(t, []string{"ops@example.com"}, up.To)

		ok(t, e, nil, "notifications", "delete", signed)
		r = cli(t, e, "", "notifications", "delete", signed)
		require.Equal(t, exitNotFound, r.code, r.stderr)
		var chans []client.NotificationChannel
		ok(t, e, &chans, "notifications", "list")
		require.Len(t, chans, 2)

		for _, tc := range []errCase{
			{"bad kind", e, []string{"notifications", "create", "--name", "x", "--url", "https://ops.example.com/x",
				"--kind", "missed", "--kind", "late"}, exitError, `kinds[1]: unknown notice kind "late" (HTTP 400)`},
			{"bad kind on update", e, []string{"notifications", "update", hook.ID, "--kind", "sometimes"}, exitError,
				"kinds[0]: unknown notice kind"},
			{"bad tag", e, []string{"notifications", "update", hook.ID, "--tag", " spaced"}, exitError, "tags: tag"},
			{"long tag", e, []string{"notifications", "create", "--name", "y", "--url", "https://ops.example.com/y",
				"--tag", strings.Repeat("t", 101)}, exitError, "tags: tags must be at most 100 characters"},
			{"no name", e, []string{"notifications", "create", "--url", "https://ops.example.com/x"}, exitUsage, "--name"},
			{"name taken", e, []string{"notifications", "create", "--name", "oncall", "--to", "x@example.com"}, exitError, "name"},
			{"both ways tags", e, []string{"notifications", "update", hook.ID, "--no-tags", "--tag", "x"}, exitUsage, "--no-tags"},
			{"both ways kinds", e, []string{"notifications", "update", hook.ID, "--no-kinds", "--kind", "missed"}, exitUsage,
				"--no-kinds"},
			{"nothing to change", e, []string{"notifications", "update", hook.ID}, exitUsage, "nothing to change"},
			{"type is fixed", e, []string{"notifications", "update", hook.ID, "--type", "email"}, exitUsage, "unknown flag"},
			{"no id", e, []string{"notifications", "get"}, exitUsage, "CHANNEL_ID"},
			{"unknown", e, []string{"notifications", "update", "00000000-0000-4000-8000-000000000000", "--name", "z"},
				exitNotFound, "not found"},
		} {
			r := cli(t, tc.env, "", tc.args...)
			require.Equal(t, tc.code, r.code, "%s: %s", tc.name, r.stderr)
			require.Contains(t, r.stderr, tc.stderr, tc.name)
		}
		// Nothing was changed by the refusals.
		ok(t, e, &got, "notifications", "get", hook.ID)
		require.Equal(t, "ops-eu", got.Name)
		require.Empty(t, got.Tags)
	})
}
