package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestConsoleResources: the Endpoints, Notifications and Calendars pages
// as an operator uses them, on both stores.
func TestConsoleResources(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		p.signIn(srv.master)
		t.Run("endpoint circuit", func(t *testing.T) { endpointStory(t, srv, p) })
		t.Run("notification channel", func(t *testing.T) { notificationStory(t, srv, p) })
		t.Run("calendar", func(t *testing.T) { calendarStory(t, srv, p) })
		p.open("/ui/")
		p.waitText("#loops", "healthy", pageTimeout)
		p.shot("console-overview", 1280, false)
		p.shot("console-overview-phone", 390, false)
	})
}

// attr reads an attribute of the first element matching sel.
func (p *page) attr(sel, name string) string {
	p.t.Helper()
	var v string
	var ok bool
	p.run(pageTimeout, "read "+sel+"@"+name, chromedp.WaitVisible(sel, chromedp.ByQuery),
		chromedp.AttributeValue(sel, name, &v, &ok, chromedp.ByQuery))
	require.True(p.t, ok, "%s has %s", sel, name)
	return v
}

// endpointStory: creates an endpoint whose receiver fails, watches its
// circuit open on the Endpoints page, disables and re-enables it.
func endpointStory(t *testing.T, srv consoleServer, p *page) {
	p.t = t
	failing := newReceiver(t)
	failing.setBehaviour(answer(http.StatusInternalServerError))

	p.open("/ui/endpoints")
	p.waitText("#no-endpoints", "No endpoints yet", pageTimeout)
	p.click(`a[href="/ui/endpoints/new"]`)
	p.waitFor("the endpoint form", `!!document.querySelector("#endpoint-form")`, pageTimeout)
	p.fill("#e-name", "billing receiver")
	p.fill("#e-url", "ftp://nowhere.example")
	p.click(`#endpoint-form button[type=submit]`)
	p.waitFor("the API's URL error next to the field", `!!document.querySelector("#e-url-error")`, pageTimeout)
	p.fill("#e-url", failing.URL())
	p.fill("#e-failures", "2")
	p.fill("#e-cooldown", "1h")
	p.fill("#e-rate", "20")
	p.click(`#endpoint-form button[type=submit]`)
	p.waitText("h1", "Endpoint created", pageTimeout)
	secret := strings.TrimSpace(p.text("#endpoint-secret"))
	require.True(t, strings.HasPrefix(secret, "whsec_"), "the signing secret, once: %q", secret)
	href := p.attr("#to-endpoint", "href")
	id := href[strings.LastIndex(href, "/")+1:]

	// Two events deliver through it; both fail, and the circuit opens.
	for i := range 2 {
		ev := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": fmt.Sprintf("invoice run %d", i),
			"start_time": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339),
			"action":     map[string]any{"type": "webhook", "params": map[string]any{"endpoint_id": id}},
			"retry":      map[string]any{"max_attempts": 1}})
		srv.api(t, srv.master, "POST", "/events/"+ev["id"].(string)+"/trigger", map[string]any{})
		failing.waitReceived(t, i+1, fireTimeout)
	}
	p.reloadUntil("/ui/endpoints", "the circuit shown open",
		fmt.Sprintf(`(function(){var e=document.querySelector('tr[data-endpoint=%q] [data-state]');return !!e && e.getAttribute("data-state")==="open";})()`, id),
		fireTimeout)
	p.shot("console-endpoints", 1280, false)
	p.shot("console-endpoints-phone", 390, false)
	p.open("/ui/?")
	p.waitText("#open-circuits", "1", pageTimeout)
	p.click(`a[href="/ui/endpoints?state=open"]`)
	p.waitText("#endpoints", "billing receiver", pageTimeout)

	p.click(fmt.Sprintf(`a[href="/ui/endpoints/%s"]`, id))
	p.waitText("#endpoint-state", "open", pageTimeout)
	p.waitText("#last-error", "500", pageTimeout)
	p.waitText("#auth-type", "none", pageTimeout)
	p.waitText("#endpoint-events", "invoice run 1", pageTimeout)
	// The circuit history says when it opened and why.
	p.waitText(`#circuit-history tr[data-change="opened"]`, "opened", pageTimeout)
	p.waitText(`#circuit-history tr[data-change="opened"]`, "500", pageTimeout)
	require.NotContains(t, p.text("main"), secret, "the secret is never shown again")
	p.shot("console-endpoint", 1280, false)
	p.shot("console-endpoint-phone", 390, false)

	// Send test reaches the (failing) receiver now, shows its answer, and
	// leaves the circuit as it was.
	p.click("#send-test")
	p.waitFor("the test's answer", `!!document.querySelector("#test-result")`, pageTimeout)
	require.Equal(t, "false", p.attr("#test-result", "data-delivered"))
	p.waitText("#test-status", "500", pageTimeout)
	failing.waitReceived(t, 3, fireTimeout)
	p.waitText("#endpoint-state", "open", pageTimeout)

	p.click("#disable")
	p.waitText("main", "Disable this endpoint?", pageTimeout)
	p.click("#confirm")
	p.waitText(".notice", "Endpoint disabled", pageTimeout)
	p.waitText("#endpoint-state", "disabled", pageTimeout)
	p.click("#enable")
	p.click("#confirm")
	p.waitText(".notice", "Endpoint enabled", pageTimeout)
	p.waitFor("the endpoint enabled", `document.querySelector("#endpoint-state").getAttribute("data-state") !== "disabled"`,
		pageTimeout)
	p.waitText(`#circuit-history tr[data-change="enabled"]`, "master", pageTimeout)
	p.waitText(`#circuit-history tr[data-change="disabled"]`, "manual", pageTimeout)

	// An edit changes what the form changed and keeps the rest.
	p.click("#edit-endpoint")
	p.waitFor("the edit form filled in", `document.querySelector("#e-failures").value === "2"`, pageTimeout)
	p.fill("#e-name", "billing receiver eu")
	p.click(`#endpoint-form button[type=submit]`)
	p.waitText(".notice", "Endpoint saved", pageTimeout)
	p.waitText("h1", "billing receiver eu", pageTimeout)
	p.waitText("main", "opens after 2 consecutive failures", pageTimeout)

	// A rotation shows the new secret once.
	p.click("#rotate")
	p.click("#confirm")
	p.waitText("h1", "New signing secret", pageTimeout)
	rotated := strings.TrimSpace(p.text("#endpoint-secret"))
	require.True(t, strings.HasPrefix(rotated, "whsec_") && rotated != secret, "a new secret: %q", rotated)
}

// notificationStory: adds a webhook notification channel scoped to a tag
// (a bad tag first: the API's error next to the field) and sends a test,
// which a real loopback receiver gets.
func notificationStory(t *testing.T, _ consoleServer, p *page) {
	p.t = t
	ops := newReceiver(t)
	p.open("/ui/notifications")
	p.waitText("#no-channels", "No channels yet", pageTimeout)
	p.fill("#n-name", "ops pager")
	p.fill("#n-url", ops.URL())
	p.click(`#channel-form input[value="circuit_opened"]`)
	p.click(`#channel-form input[value="missed"]`)
	p.fill("#n-tags", "billing, "+strings.Repeat("t", 101))
	p.click(`#channel-form button[type=submit]`)
	p.waitText("#n-tags-error", "at most 100 characters", pageTimeout)
	require.Equal(t, "true", p.attr("#n-tags", "aria-invalid"))
	p.fill("#n-tags", "billing, ops")
	p.click(`#channel-form button[type=submit]`)
	p.waitText("#channel-created", "ops pager", pageTimeout)
	p.waitFor("the channel's secret shown once", `document.querySelector("#channel-secret").innerText.indexOf("whsec_") === 0`,
		pageTimeout)
	p.waitText("#channels", "circuit_opened", pageTimeout)
	p.waitText("#channels", "missed", pageTimeout)
	require.Equal(t, []string{"billing", "ops"}, strings.Fields(p.text("#channels tbody tr td:nth-child(5)")),
		"the Tags column")
	p.click(`#channels button[type=submit]`)
	p.waitText("#test-result", "delivered", pageTimeout)
	require.NotContains(t, p.text("#test-result"), "not delivered")
	ops.waitReceived(t, 1, fireTimeout)
	p.shot("console-notifications", 1280, false)
	p.shot("console-notifications-phone", 390, false)

	// The channel's page lists the test notice, delivered, with the
	// receiver's answer; an edit renames it; a test from here answers here.
	p.click(`#channels a[href^="/ui/notifications/"]`)
	p.waitText("h1", "ops pager", pageTimeout)
	p.waitText(`#notices tr[data-outcome="delivered"]`, "test", pageTimeout)
	p.waitText(`#notices tr[data-outcome="delivered"]`, "HTTP 200", pageTimeout)
	p.fill("#n-name", "ops pager eu")
	p.click(`#channel-form button[type=submit]`)
	p.waitText(".notice", "Channel saved", pageTimeout)
	p.waitText("h1", "ops pager eu", pageTimeout)
	p.waitText("#channel-kinds", "circuit_opened", pageTimeout)
	p.click("#send-test")
	p.waitFor("the test's answer", `!!document.querySelector("#test-result")`, pageTimeout)
	require.Equal(t, "true", p.attr("#test-result", "data-delivered"))
	ops.waitReceived(t, 2, fireTimeout)
	p.waitFor("two delivered notices", `document.querySelectorAll('#notices tr[data-outcome="delivered"]').length === 2`,
		pageTimeout)
	p.shot("console-notification", 1280, false)
	p.shot("console-notification-phone", 390, false)
}

// calendarStory: creates a calendar of public holidays, sees the blocked
// days in the month view, edits it, sees the event that uses it, and is
// refused the delete with the API's answer.
func calendarStory(t *testing.T, srv consoleServer, p *page) {
	p.t = t
	day := func(days int) string { return time.Now().UTC().AddDate(0, 0, days).Format("2006-01-02") }
	p.open("/ui/calendars")
	p.waitText("#no-calendars", "No calendars yet", pageTimeout)
	p.click(`a[href="/ui/calendars/new"]`)
	p.waitFor("the calendar form", `!!document.querySelector("#calendar-form")`, pageTimeout)
	p.fill("#c-name", "public holidays")
	p.fill("#c-timezone", "Europe/Atlantis")
	p.fill("#c-dates", day(40))
	p.fill("#c-ranges", day(60)+".."+day(62))
	p.click(`#calendar-form button[type=submit]`)
	p.waitFor("the API's zone error next to the field", `!!document.querySelector("#c-timezone-error")`, pageTimeout)
	p.fill("#c-timezone", "Europe/Prague")
	p.click(`#calendar-form button[type=submit]`)
	p.waitText(".notice", "Calendar created", pageTimeout)
	for _, d := range []string{day(40), day(60), day(61), day(62)} {
		p.waitFor(d+" blocked in the month view", fmt.Sprintf(`!!document.querySelector('td.blocked[data-date=%q]')`, d), pageTimeout)
	}
	p.waitText("#blocked-total", "4 blocked days", pageTimeout)
	p.waitText("#no-users", "No event uses", pageTimeout)

	p.click("#edit-calendar")
	p.waitFor("the edit form filled in", fmt.Sprintf(`document.querySelector("#c-ranges").value === %q`, day(60)+".."+day(62)),
		pageTimeout)
	p.fill("#c-rules", "FREQ=WEEKLY;BYDAY=SU")
	p.click(`#calendar-form button[type=submit]`)
	p.waitText(".notice", "Calendar saved", pageTimeout)
	p.waitFor("every Sunday blocked", `document.querySelectorAll("td.blocked").length >= 52`, pageTimeout)

	href, err := p.location()
	require.NoError(t, err)
	id := href[strings.LastIndex(href, "/")+1:]
	if i := strings.IndexByte(id, '?'); i >= 0 {
		id = id[:i]
	}
	srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "daily export",
		"start_time": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "rrule": "FREQ=DAILY",
		"timezone": "Europe/Prague", "webhook": newReceiver(t).URL(),
		"calendars": []map[string]string{{"id": id, "policy": "roll_forward"}}})
	p.open("/ui/calendars/" + id)
	p.waitText("#calendar-events", "daily export", pageTimeout)
	p.shot("console-calendar", 1280, false)
	p.shot("console-calendar-phone", 390, false)
	p.click("#delete-calendar")
	p.click("#confirm")
	p.waitText(".error", "used by 1 event", pageTimeout)
	p.open("/ui/calendars")
	p.waitText("#calendars", "public holidays", pageTimeout)
	p.shot("console-calendars", 1280, false)
}

// location is the address the tab shows.
func (p *page) location() (string, error) {
	var loc string
	err := chromedp.Run(p.ctx, chromedp.Location(&loc))
	return loc, err
}
