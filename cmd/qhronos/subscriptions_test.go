package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// subscriptions create|list|get|update|pause|resume|delete subscribe
// endpoints to a topic or a pattern: list filters by topic, endpoint,
// paused and tag and shows the filter cut short ("-" when none); update
// sends only the flags given, --no-filter sends null and --no-tags an
// empty list. A filter that does not compile is the server's 400 naming
// filter, an unknown topic or endpoint one naming topic or endpoint_id; a
// topic a subscription names exactly cannot be deleted (the server's 409),
// one only a pattern names can. A tag-scoped token sees and changes only
// the subscriptions in its scope.
func TestSubscriptionCommands(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		rc := qhronostest.NewReceiver(t)
		tag := "subs-" + qhronostest.RandomHex(t, 4)
		ok(t, e, nil, "topics", "create", "digest.daily")
		ok(t, e, nil, "topics", "create", "billing.invoice-paid")
		var ep, other client.Endpoint
		ok(t, e, &ep, "endpoints", "create", "--name", "digests", "--url", rc.URL, "--tag", tag)
		ok(t, e, &other, "endpoints", "create", "--name", "other", "--url", rc.URL)

		filter := `metadata.plan == "pro" && "vip" in tags && scheduled_at > timestamp("2030-01-01T00:00:00Z")`
		var sub client.TopicSubscription
		ok(t, e, &sub, "subscriptions", "create", "--topic", "digest.daily", "--endpoint", ep.ID, "--filter", filter,
			"--tag", tag, "--description", "pro digests")
		require.Equal(t, "digest.daily", sub.Topic)
		require.Equal(t, ep.ID, sub.EndpointID)
		require.Equal(t, filter, *sub.Filter)
		require.Equal(t, []string{tag}, sub.Tags)
		require.Equal(t, "pro digests", sub.Description)
		require.False(t, sub.Paused)
		r := cli(t, e, "", "subscriptions", "create", "--topic", "digest.*", "--endpoint", other.ID, "--paused")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "digest.*", field(t, r.stdout, "TOPIC"))
		require.Equal(t, "-", field(t, r.stdout, "FILTER"))
		require.Equal(t, "-", field(t, r.stdout, "TAGS"))
		require.Equal(t, "yes", field(t, r.stdout, "PAUSED"))
		pattern := field(t, r.stdout, "ID")
		var billing client.TopicSubscription
		ok(t, e, &billing, "subscriptions", "create", "--topic", "billing.invoice-paid", "--endpoint", other.ID)

		r = cli(t, e, "", "subscriptions", "list")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, []string{"ID", "TOPIC", "ENDPOINT", "FILTER", "TAGS", "PAUSED"}, strings.Fields(strings.Split(r.stdout, "\n")[0]))
		cells := row(t, r.stdout, sub.ID)
		require.Equal(t, []string{sub.ID, "digest.daily", ep.ID}, cells[:3])
		require.Equal(t, []string{tag, "no"}, cells[len(cells)-2:])
		require.Contains(t, r.stdout, truncate(filter, 40), "the filter, cut short")
		require.True(t, strings.HasSuffix(truncate(filter, 40), "…"))
		require.NotContains(t, r.stdout, filter)
		require.Equal(t, []string{pattern, "digest.*", other.ID, "-", "-", "yes"}, row(t, r.stdout, pattern))
		var subs []client.TopicSubscription
		ok(t, e, &subs, "subscriptions", "list")
		require.Len(t, subs, 3)
		require.Equal(t, billing.ID, subs[0].ID, "newest first")
		ok(t, e, &subs, "subscriptions", "list", "--topic", "digest.daily")
		require.Len(t, subs, 1)
		require.Equal(t, sub.ID, subs[0].ID)
		ok(t, e, &subs, "subscriptions", "list", "--topic", "digest.*")
		require.Len(t, subs, 1, "the pattern as written")
		require.Equal(t, pattern, subs[0].ID)
		ok(t, e, &subs, "subscriptions", "list", "--endpoint", other.ID)
		require.Len(t, subs, 2)
		ok(t, e, &subs, "subscriptions", "list", "--endpoint", other.ID, "--paused", "false")
		require.Len(t, subs, 1)
		require.Equal(t, billing.ID, subs[0].ID)
		ok(t, e, &subs, "subscriptions", "list", "--tag", tag+",elsewhere")
		require.Len(t, subs, 1)
		require.Equal(t, sub.ID, subs[0].ID)
		ok(t, e, &subs, "subscriptions", "list", "--topic", "digest.weekly")
		require.Empty(t, subs)

		// get shows the whole filter.
		r = cli(t, e, "", "subscriptions", "get", sub.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, filter, field(t, r.stdout, "FILTER"))
		require.Equal(t, "pro digests", field(t, r.stdout, "DESCRIPTION"))
		require.Equal(t, tag, field(t, r.stdout, "TAGS"))

		// update sends only the flags given.
		var up client.TopicSubscription
		ok(t, e, &up, "subscriptions", "update", sub.ID, "--filter", `metadata.plan == "free"`)
		require.Equal(t, `metadata.plan == "free"`, *up.Filter)
		require.Equal(t, "pro digests", up.Description)
		require.Equal(t, []string{tag}, up.Tags)
		var cleared client.TopicSubscription // a fresh variable: the API's null filter leaves a pointer as it was
		ok(t, e, &cleared, "subscriptions", "update", sub.ID, "--no-filter", "--description", "every digest")
		require.Nil(t, cleared.Filter)
		require.Equal(t, "every digest", cleared.Description)
		require.Equal(t, "digest.daily", cleared.Topic)
		r = cli(t, e, "", "subscriptions", "list", "--topic", "digest.daily")
		require.Equal(t, []string{sub.ID, "digest.daily", ep.ID, "-", tag, "no"}, row(t, r.stdout, sub.ID))
		ok(t, e, &up, "subscriptions", "update", pattern, "--topic", "billing.*", "--endpoint", ep.ID, "--tag", "a,b")
		require.Equal(t, "billing.*", up.Topic)
		require.Equal(t, ep.ID, up.EndpointID)
		require.Equal(t, []string{"a", "b"}, up.Tags)
		require.True(t, up.Paused, "paused stays")
		ok(t, e, &up, "subscriptions", "update", pattern, "--no-tags")
		require.Empty(t, up.Tags)

		// pause and resume.
		r = cli(t, e, "", "subscriptions", "pause", sub.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "yes", field(t, r.stdout, "PAUSED"))
		ok(t, e, &subs, "subscriptions", "list", "--paused", "true")
		require.Len(t, subs, 2)
		ok(t, e, &up, "subscriptions", "resume", sub.ID)
		require.False(t, up.Paused)
		ok(t, e, &subs, "subscriptions", "list", "--paused", "true")
		require.Len(t, subs, 1)
		require.Equal(t, pattern, subs[0].ID)

		// A token scoped to tag sees and changes only its subscriptions.
		scoped := scopedEnv(t, e, srv, "write", tag)
		ok(t, scoped, &subs, "subscriptions", "list")
		require.Len(t, subs, 1)
		require.Equal(t, sub.ID, subs[0].ID)

		for _, tc := range []errCase{
			{"filter does not compile", e, []string{"subscriptions", "create", "--topic", "digest.daily", "--endpoint", ep.ID,
				"--filter", "metadata.plan =="}, exitError, "filter: does not compile"},
			{"filter not a bool", e, []string{"subscriptions", "update", sub.ID, "--filter", "name"}, exitError, "filter: "},
			{"unknown topic", e, []string{"subscriptions", "create", "--topic", "digest.weekly", "--endpoint", ep.ID},
				exitError, `topic: no topic named "digest.weekly"`},
			{"bad pattern", e, []string{"subscriptions", "update", sub.ID, "--topic", "Digest.*"}, exitError, "topic: "},
			{"unknown endpoint", e, []string{"subscriptions", "create", "--topic", "digest.daily", "--endpoint",
				"00000000-0000-4000-8000-000000000000"}, exitError, "endpoint_id: unknown endpoint"},
			{"endpoint out of scope", scoped, []string{"subscriptions", "create", "--topic", "digest.daily", "--endpoint",
				other.ID, "--tag", tag}, exitError, "endpoint_id: unknown endpoint"},
			{"out of scope", scoped, []string{"subscriptions", "get", billing.ID}, exitNotFound, "not found"},
			{"topic in use", e, []string{"topics", "delete", "digest.daily"}, exitError,
				"topic is in use: 1 subscription names it; delete them or point them elsewhere first " +
					"(GET /subscriptions?topic=digest.daily lists them) (HTTP 409)"},
			{"no topic", e, []string{"subscriptions", "create", "--endpoint", ep.ID}, exitUsage, "--topic and --endpoint"},
			{"no endpoint", e, []string{"subscriptions", "create", "--topic", "digest.daily"}, exitUsage, "--topic and --endpoint"},
			{"bad paused", e, []string{"subscriptions", "list", "--paused", "maybe"}, exitUsage, "--paused"},
			{"both ways filter", e, []string{"subscriptions", "update", sub.ID, "--no-filter", "--filter", "true"}, exitUsage,
				"--no-filter"},
			{"both ways tags", e, []string{"subscriptions", "update", sub.ID, "--no-tags", "--tag", "x"}, exitUsage, "--no-tags"},
			{"nothing to change", e, []string{"subscriptions", "update", sub.ID}, exitUsage, "nothing to change"},
			{"no id", e, []string{"subscriptions", "pause"}, exitUsage, "SUBSCRIPTION_ID"},
			{"unknown", e, []string{"subscriptions", "resume", "00000000-0000-4000-8000-000000000000"}, exitNotFound, "not found"},
		} {
			r := cli(t, tc.env, "", tc.args...)
			require.Equal(t, tc.code, r.code, "%s: %s", tc.name, r.stderr)
			require.Contains(t, r.stderr, tc.stderr, tc.name)
		}
		// Nothing was changed by the refusals.
		ok(t, e, &up, "subscriptions", "get", sub.ID)
		require.Equal(t, "digest.daily", up.Topic)
		require.Nil(t, up.Filter)

		// The subscription first, then its topic; a topic only a pattern
		// names (billing.* now) can go.
		ok(t, e, nil, "subscriptions", "delete", sub.ID)
		r = cli(t, e, "", "subscriptions", "get", sub.ID)
		require.Equal(t, exitNotFound, r.code, r.stderr)
		r = cli(t, e, "", "topics", "delete", "digest.daily")
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "deleted digest.daily")
		ok(t, e, nil, "subscriptions", "delete", billing.ID)
		ok(t, e, nil, "topics", "delete", "billing.invoice-paid")
		ok(t, e, &subs, "subscriptions", "list")
		require.Len(t, subs, 1)
		require.Equal(t, "billing.*", subs[0].Topic)
	})
}
