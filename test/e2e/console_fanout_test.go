package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

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

// TestConsoleFanoutDeliveries: an event that targets a topic, made in the
// console's form, and its occurrence's fan-out, on both stores.
func TestConsoleFanoutDeliveries(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		p.signIn(srv.master)
		fanoutDeliveryStory(t, srv, p)
	})
}

// fanoutDeliveryStory: a topic has two subscribers, one of whose receiver
// answers 503. An operator makes an event that targets the topic in the
// form (metadata the topic's schema refuses first: the API's error next to
// the field) and triggers it. The occurrence fails; its page shows the
// fan-out's counts and one row per subscription. The receiver mended, the
// failing row's Replay delivers that subscription's delivery alone, and
// the subscription's page lists both attempts.
func fanoutDeliveryStory(t *testing.T, srv consoleServer, p *page) {
	good, bad := newReceiver(t), newReceiver(t)
	bad.setBehaviour(answer(http.StatusServiceUnavailable))
	srv.api(t, srv.master, "POST", "/topics", map[string]any{"name": "invoice.due",
		"description": "An invoice falls due", "schema": map[string]any{"type": "object", "required": []string{"region"}}})
	subscribe := func(name, url string) (subID, epID string) {
		ep := srv.api(t, srv.master, "POST", "/endpoints", map[string]any{"name": name, "url": url})
		sub := srv.api(t, srv.master, "POST", "/subscriptions", map[string]any{"topic": "invoice.due",
			"endpoint_id": ep["id"]})
		return sub["id"].(string), ep["id"].(string)
	}
	goodSub, goodEp := subscribe("ledger", good.URL())
	badSub, badEp := subscribe("mailer", bad.URL())

	// The form: a topic is one more action; choosing it offers the
	// catalogue and hides what only an action has.
	p.open("/ui/events/new")
	p.settle()
	p.waitFor("the action's fields shown, the topic picker not", `document.querySelector("#f-topic-fields").hidden &&
		!document.querySelector("#f-action-fields").hidden`, pageTimeout)
	p.fill("#f-name", "invoice reminder")
	p.selectValue("#f-action", "topic")
	p.waitFor("the topic picker shown, the target and completion hidden", `(function(){
		var topic = document.querySelector("#f-topic");
		return !!topic.offsetParent && !document.querySelector("#f-target").offsetParent &&
			!document.querySelector("#f-completion").offsetParent && !document.querySelector("#f-secret").offsetParent &&
			topic.innerText.indexOf("invoice.due · An invoice falls due") >= 0;
	})()`, pageTimeout)
	p.selectValue("#f-topic", "invoice.due")
	p.click("#event-form details > summary")
	p.fill("#f-metadata", `{"seats": 3}`)
	p.fill("#f-attempts", "1")
	p.click(`#event-form button[type=submit]`)
	p.waitText("#f-metadata + .field-error", "does not follow the topic's schema", pageTimeout)
	p.waitFor("the topic still chosen, shown", `document.querySelector("#f-topic").value === "invoice.due" &&
		!!document.querySelector("#f-topic").offsetParent && !document.querySelector("#f-target").offsetParent`, pageTimeout)
	p.fill("#f-metadata", `{"region": "eu", "seats": 3}`)
	p.shot("console-event-form-topic", 1280, false)
	p.click(`#event-form button[type=submit]`)
	p.waitText(".notice", "Event created", pageTimeout)
	p.waitText("#event-topic", "topic invoice.due", pageTimeout)
	require.Equal(t, "/ui/topics/invoice.due", p.attr("#event-topic", "href"))
	loc, err := p.location()
	require.NoError(t, err)
	eventPage := loc[strings.Index(loc, "/ui/events/"):]
	if i := strings.IndexByte(eventPage, '?'); i >= 0 {
		eventPage = eventPage[:i]
	}
	ev := srv.api(t, srv.master, "GET", strings.TrimPrefix(eventPage, "/ui"), nil)
	require.Equal(t, "invoice.due", ev["topic"])

	// Triggered: the ledger takes it, the mailer answers 503 and, with one
	// attempt allowed, the occurrence fails.
	p.open(eventPage + "/confirm/trigger")
	p.click("#confirm")
	p.waitText(".notice", "Triggered", pageTimeout)
	bad.waitReceived(t, 1, fireTimeout)
	var occID string
	for id := range bad.counts() {
		occID = id
	}
	occPage := "/ui/occurrences/" + occID
	badRow := fmt.Sprintf(`#fanout-deliveries tr[data-subscription=%q]`, badSub)
	goodRow := fmt.Sprintf(`#fanout-deliveries tr[data-subscription=%q]`, goodSub)
	p.reloadUntil(occPage, "the occurrence failed, its fan-out counted", `(function(){
		var s = document.querySelector("#occurrence-status"), c = document.querySelector("#fanout-counts");
		return !!s && s.innerText === "failed" && !!c && c.getAttribute("data-subscriptions") === "2" &&
			c.getAttribute("data-delivered") === "1" && c.getAttribute("data-failed") === "1";
	})()`, fireTimeout)
	p.waitText("#fanout-counts", "2 subscriptions matched when it fired", pageTimeout)
	require.Equal(t, "failed", p.attr(badRow, "data-status"))
	require.Equal(t, "delivered", p.attr(goodRow, "data-status"))
	p.waitText(badRow, "503", pageTimeout)
	p.waitText(badRow, "mailer", pageTimeout)
	require.Equal(t, "/ui/endpoints/"+badEp, p.attr(badRow+` a[href^="/ui/endpoints/"]`, "href"))
	require.Equal(t, "/ui/endpoints/"+goodEp, p.attr(goodRow+` a[href^="/ui/endpoints/"]`, "href"))
	require.Equal(t, "/ui/subscriptions/"+badSub, p.attr(badRow+` a[href^="/ui/subscriptions/"]`, "href"))
	p.waitText("#replay-hint", "Re-sends the failed deliveries only", pageTimeout)
	p.waitText("#attempts thead", "Subscription", pageTimeout)
	p.waitText("#attempts", badSub, pageTimeout)
	require.Equal(t, "/ui/topics/invoice.due", p.attr("#occurrence-topic", "href"))
	p.shot("console-occurrence-fanout", 1280, false)

	// The mailer mended, its row's Replay sends its delivery again, alone.
	bad.setBehaviour(answer(http.StatusOK))
	p.click(badRow + " button.replay-delivery")
	p.waitText(".notice", "Replay queued: the delivery to subscription "+badSub, pageTimeout)
	p.reloadUntil(occPage, "the replayed delivery delivered, the occurrence completed", fmt.Sprintf(`(function(){
		var s = document.querySelector("#occurrence-status"), r = document.querySelector(%q);
		return !!s && s.innerText === "completed" && !!r && r.getAttribute("data-status") === "delivered" &&
			document.querySelector("#fanout-counts").getAttribute("data-delivered") === "2";
	})()`, badRow), fireTimeout)
	require.Len(t, bad.attempts(occID), 2, "the mailer got it again")
	require.Equal(t, 1, good.received(), "the ledger's delivery is not sent again")

	// The subscription's page lists its attempts, newest first.
	p.click(badRow + ` a[href^="/ui/subscriptions/"]`)
	p.waitText("#subscription-deliveries tbody tr:first-child", "(manual)", pageTimeout)
	p.waitText("#subscription-deliveries tbody tr:last-child", "503", pageTimeout)
	require.Equal(t, occPage, p.attr("#subscription-deliveries tbody tr:last-child a", "href"))
	p.shot("console-subscription-deliveries", 1280, false)
}

// TestConsoleTopicEvents: a topic's page lists the events that target it,
// on both stores.
func TestConsoleTopicEvents(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		p.signIn(srv.master)
		topicEventsStory(t, srv, p)
	})
}

// topicEventsStory: an operator wants to delete a topic and is refused
// while events target it. The topic's page lists them — each linked to its
// event, with its status and next run —, and its link opens Events
// filtered by the topic: those two and no other, the filter shown and
// cleared like the others. A topic no event targets says it can go.
func topicEventsStory(t *testing.T, srv consoleServer, p *page) {
	for _, name := range []string{"report.ready", "report.archived"} {
		srv.api(t, srv.master, "POST", "/topics", map[string]any{"name": name})
	}
	start := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	create := func(body map[string]any) string {
		body["start_time"] = start
		return srv.api(t, srv.master, "POST", "/events", body)["id"].(string)
	}
	ledger := create(map[string]any{"name": "ledger export", "topic": "report.ready"})
	mailer := create(map[string]any{"name": "mail digest", "topic": "report.ready", "rrule": "FREQ=DAILY"})
	create(map[string]any{"name": "unrelated hook", "webhook": newReceiver(t).URL()})

	p.open("/ui/topics/report.ready")
	p.click("#delete-topic")
	p.click("#confirm")
	p.waitText(".error", "topic is in use: 2 events target it", pageTimeout)
	p.waitText("#topic-events-h", "Events that target this topic", pageTimeout)
	for id, name := range map[string]string{ledger: "ledger export", mailer: "mail digest"} {
		row := fmt.Sprintf(`#topic-events tr[data-event=%q]`, id)
		p.waitText(row, name, pageTimeout)
		p.waitText(row, "active", pageTimeout)
		require.Equal(t, "/ui/events/"+id, p.attr(row+" a", "href"))
		require.NotEmpty(t, p.attr(row+" time", "datetime"), "the next run is shown")
	}
	require.NotContains(t, p.text("#topic-events"), "unrelated hook")
	p.shot("console-topic-events", 1280, false)

	p.click("#topic-events-all")
	p.waitText("#events-table", "ledger export", pageTimeout)
	p.waitText("#events-table", "mail digest", pageTimeout)
	require.NotContains(t, p.text("#events-table"), "unrelated hook")
	p.waitFor("the topic filter shown", `document.querySelector("#events-topic").value === "report.ready"`, pageTimeout)
	href, err := p.location()
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(href, "/ui/events?topic=report.ready"), href)
	p.click(`form.filters[role=search] a[href="/ui/events"]`)
	p.waitText("#events-table", "unrelated hook", pageTimeout)
	p.waitFor("the topic filter cleared", `document.querySelector("#events-topic").value === ""`, pageTimeout)

	// A topic no event targets says it can be deleted.
	p.open("/ui/topics/report.archived")
	p.waitText("#no-topic-events", "No event targets this topic, and no subscription names it exactly: it can be deleted",
		pageTimeout)
}
