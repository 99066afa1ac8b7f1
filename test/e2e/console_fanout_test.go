package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConsoleFanout: the Topics and Subscriptions pages as an operator uses
// them with the master token, on both stores.
func TestConsoleFanout(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		p.signIn(srv.master)
		fanoutStory(t, srv, p)
	})
}

// fanoutStory: adds a topic with a JSON Schema (a schema that is not one
// first: the API's error next to the field), subscribes an endpoint to it
// with a filter, sees the subscription on the topic's page and on
// Subscriptions, pauses and resumes it, and sees a filter that does not
// compile refused next to the Filter field, what was typed kept.
func fanoutStory(t *testing.T, srv consoleServer, p *page) {
	ep := srv.api(t, srv.master, "POST", "/endpoints", map[string]any{"name": "digest receiver",
		"url": newReceiver(t).URL()})
	epID := ep["id"].(string)

	p.open("/ui/topics")
	p.waitText("#no-topics", "The catalogue is empty", pageTimeout)
	p.fill("#tp-name", "digest.daily")
	p.fill("#tp-description", "The daily digest")
	p.fill("#tp-schema", `{"type": 7}`)
	p.click(`#topic-form button[type=submit]`)
	p.waitText("#tp-schema-error", "JSON Schema", pageTimeout)
	require.Equal(t, "true", p.attr("#tp-schema", "aria-invalid"))
	p.fill("#tp-schema", `{"type": "object", "required": ["region"]}`)
	p.click(`#topic-form button[type=submit]`)
	p.waitText(".notice", "Topic created", pageTimeout)
	p.waitText("#topic-name", "digest.daily", pageTimeout)
	p.waitText("#topic-schema", `"required": [`, pageTimeout)
	p.waitText("#no-topic-subscriptions", "No subscription names this topic", pageTimeout)
	p.open("/ui/topics")
	p.waitText(`#topics tr[data-topic="digest.daily"]`, "schema", pageTimeout)
	p.waitText(`#topics tr[data-topic="digest.daily"]`, "The daily digest", pageTimeout)
	p.shot("console-topics", 1280, false)

	// Subscribe the endpoint from the topic's page: the topic comes filled in.
	p.click(`a[href="/ui/topics/digest.daily"]`)
	p.click("#subscribe-to-topic")
	p.waitFor("the topic filled in", `document.querySelector("#s-topic").value === "digest.daily"`, pageTimeout)
	p.selectValue("#s-endpoint", epID)
	p.fill("#s-filter", `metadata.region == "eu"`)
	p.fill("#s-description", "EU digests")
	p.fill("#s-tags", "digests")
	p.click(`#subscription-form button[type=submit]`)
	p.waitText(".notice", "Subscription created", pageTimeout)
	p.waitText("#subscription-endpoint", "digest receiver", pageTimeout)
	p.waitText("#subscription-filter", `metadata.region == "eu"`, pageTimeout)
	p.waitText("#subscription-state", "active", pageTimeout)
	href, err := p.location()
	require.NoError(t, err)
	id := href[strings.LastIndex(href, "/")+1:]
	if i := strings.IndexByte(id, '?'); i >= 0 {
		id = id[:i]
	}
	row := fmt.Sprintf(`tr[data-subscription=%q]`, id)

	// Listed on the topic's page and on Subscriptions, the endpoint linked.
	p.open("/ui/topics/digest.daily")
	p.waitText("#topic-subscriptions "+row, "digest receiver", pageTimeout)
	p.waitText("#topic-subscriptions "+row, `metadata.region == "eu"`, pageTimeout)
	p.shot("console-topic", 1280, false)
	p.open("/ui/subscriptions")
	p.waitText("#subscriptions "+row, "digest receiver", pageTimeout)
	require.Equal(t, "/ui/endpoints/"+epID, p.attr("#subscriptions "+row+` a[href^="/ui/endpoints/"]`, "href"))
	p.waitText("#subscriptions "+row, "digests", pageTimeout)
	p.shot("console-subscriptions", 1280, false)
	p.shot("console-subscriptions-phone", 390, false)

	// Pause it: the page, the list's filter and the API agree; resume it.
	p.click(fmt.Sprintf(`#subscriptions a[href="/ui/subscriptions/%s"]`, id))
	p.click("#pause-subscription")
	p.waitText(".notice", "Paused", pageTimeout)
	p.waitFor("the subscription paused", `document.querySelector("#subscription-state").getAttribute("data-paused") === "true"`,
		pageTimeout)
	require.Equal(t, true, srv.api(t, srv.master, "GET", "/subscriptions/"+id, nil)["paused"])
	p.open("/ui/subscriptions?paused=true")
	p.waitText("#subscriptions "+row, "paused", pageTimeout)
	p.open("/ui/subscriptions?paused=false")
	p.waitText("#no-subscriptions", "No subscription matches these filters", pageTimeout)
	p.open("/ui/subscriptions/" + id)
	p.click("#resume-subscription")
	p.waitText(".notice", "Resumed", pageTimeout)
	p.waitText("#subscription-state", "active", pageTimeout)

	// A filter that does not compile: CEL's message next to the field, what
	// was typed kept, the stored filter unchanged.
	p.fill("#s-filter", `metadata.region ==`)
	p.click(`#subscription-form button[type=submit]`)
	p.waitText("#s-filter-error", "does not compile", pageTimeout)
	require.Equal(t, "true", p.attr("#s-filter", "aria-invalid"))
	p.waitFor("what was typed kept", `document.querySelector("#s-filter").value === "metadata.region =="`, pageTimeout)
	require.Equal(t, `metadata.region == "eu"`, srv.api(t, srv.master, "GET", "/subscriptions/"+id, nil)["filter"])
	p.shot("console-subscription", 1280, false)

	// Cleared, the filter is removed: every firing.
	p.fill("#s-filter", " ")
	p.click(`#subscription-form button[type=submit]`)
	p.waitText(".notice", "Subscription saved", pageTimeout)
	p.waitText("#subscription-filter", "every firing", pageTimeout)
	require.Nil(t, srv.api(t, srv.master, "GET", "/subscriptions/"+id, nil)["filter"])

	// The topic cannot go while the subscription names it.
	p.open("/ui/topics/digest.daily")
	p.click("#delete-topic")
	p.click("#confirm")
	p.waitText(".error", "topic is in use: 1 subscription names it", pageTimeout)
}
