package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Bulk actions on the Events list, as a user with a token scoped to one
// team: tick rows (or the whole page), confirm on a page that states the
// count and names every event, and read which succeeded and which failed
// and why. Events outside the token's scope are never changed.
func TestConsoleBulkEvents(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		bulkStory(t, srv, p)
	})
}

// apiStatus answers the status code of a call (for reads expected to fail).
func (s consoleServer) apiStatus(t *testing.T, token, method, path string) int {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

// settle waits until the page's scripts have run (times rewritten, boxes
// wired), so a click lands where the user would click.
func (p *page) settle() {
	p.t.Helper()
	p.waitFor("the page settled", `document.readyState === "complete"`, pageTimeout)
}

// tick clicks a checkbox the way a user does (its change handlers run).
func (p *page) tick(sel string) {
	p.t.Helper()
	var ignored any
	p.run(pageTimeout, "tick "+sel, chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).click()`, sel), &ignored))
}

func bulkStory(t *testing.T, srv consoleServer, p *page) {
	ok := newReceiver(t)
	start := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	create := func(name string, tags ...string) string {
		ev := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": name, "start_time": start,
			"rrule": "FREQ=DAILY", "webhook": ok.URL(), "tags": tags})
		return ev["id"].(string)
	}
	a, b, c := create("bulk alpha", "team-a"), create("bulk bravo", "team-a"), create("bulk charlie", "team-a")
	shared := create("bulk shared", "team-a", "finance")
	foreign := create("bulk foreign", "team-b")
	tok := srv.api(t, srv.master, "POST", "/tokens", map[string]any{"sub": "team-a-operator", "access": "write",
		"scope": []string{"team-a", "urgent"}, "expires_at": "in 1 day"})
	p.signIn(tok["token"].(string))
	status := func(id string) string {
		return srv.api(t, srv.master, "GET", "/events/"+id, nil)["status"].(string)
	}

	// Nothing ticked: the form says so under its field.
	p.open("/ui/events?q=bulk")
	p.settle()
	p.waitFor("the four events the token can read, not the foreign one", `document.querySelectorAll("#events-table tbody tr").length === 4 &&
		document.querySelector("#events-table").innerText.indexOf("bulk foreign") < 0`, pageTimeout)
	p.click("#bulk-submit")
	p.waitText("#bulk-id-error", "select at least one event", pageTimeout)

	// Select all on the page, pause: the confirmation names the four and
	// the count; one of them has a tag outside the token's scope.
	p.settle()
	p.tick("#select-all")
	p.waitFor("every row ticked", `Array.from(document.querySelectorAll("input.row-select")).every(function(b){return b.checked;}) &&
		document.querySelectorAll("input.row-select").length === 4`, pageTimeout)
	p.selectValue("#bulk-action", "pause")
	p.click("#bulk-submit")
	p.waitText("h1", "Pause 4 events", pageTimeout)
	p.waitFor("every selected event named", `(function(){var t=document.querySelector("#bulk-targets").innerText;
		return ["bulk alpha","bulk bravo","bulk charlie","bulk shared"].every(function(n){return t.indexOf(n)>=0;}) &&
		document.querySelectorAll("#bulk-targets li").length === 4;})()`, pageTimeout)
	p.waitText("#bulk-count", "pauses 4 events", pageTimeout)
	p.shot("console-events-bulk-confirm", 1280, false)
	p.settle()
	p.click("#confirm")
	p.waitText(".notice", "Paused 3 of 4 events. 1 failed", pageTimeout)
	p.waitText("#bulk-failed", "bulk shared", pageTimeout)
	p.waitText("#bulk-failed", "outside token scope", pageTimeout)
	p.waitText("#bulk-succeeded", "bulk charlie", pageTimeout)
	require.Equal(t, "paused", status(a))
	require.Equal(t, "paused", status(b))
	require.Equal(t, "paused", status(c))
	require.Equal(t, "active", status(shared), "an event the token may not change stays as it was")

	// Resume two of them, ticked one by one.
	p.open("/ui/events?q=bulk")
	p.settle()
	p.tick(`input.row-select[value="` + b + `"]`)
	p.tick(`input.row-select[value="` + c + `"]`)
	p.waitFor("the page's box half-ticked", `document.querySelector("#select-all").indeterminate`, pageTimeout)
	p.selectValue("#bulk-action", "resume")
	p.click("#bulk-submit")
	p.waitText("h1", "Resume 2 events", pageTimeout)
	p.settle()
	p.click("#confirm")
	p.waitText(".notice", "Resumed 2 of 2 events.", pageTimeout)
	require.Equal(t, "active", status(b))
	require.Equal(t, "active", status(c))
	require.Equal(t, "paused", status(a))

	// Add a tag: without one, the error is under the tag field and the
	// ticked box stays ticked; with one, the event carries it.
	p.open("/ui/events?q=bulk")
	p.settle()
	p.tick(`input.row-select[value="` + a + `"]`)
	p.selectValue("#bulk-action", "tag")
	p.click("#bulk-submit")
	p.waitText("#bulk-tag-error", "is required to add a tag", pageTimeout)
	p.waitFor("the row still ticked", fmt.Sprintf(`document.querySelector('input.row-select[value="%s"]').checked`, a), pageTimeout)
	p.settle()
	p.fill("#bulk-tag", "urgent")
	p.click("#bulk-submit")
	p.waitText("h1", "Add tag to 1 event: “urgent”", pageTimeout)
	p.settle()
	p.click("#confirm")
	p.waitText(".notice", "Tagged 1 of 1 events.", pageTimeout)
	require.ElementsMatch(t, []any{"team-a", "urgent"}, srv.api(t, srv.master, "GET", "/events/"+a, nil)["tags"])

	// A forged selection naming an event outside the scope: the
	// confirmation says it is not visible, and the action leaves it alone.
	p.open("/ui/events/bulk?" + url.Values{"action": {"delete"}, "id": {a, foreign}}.Encode())
	p.waitText("h1", "Delete 1 event", pageTimeout)
	p.waitText("#bulk-targets", "not found, or not visible to your token", pageTimeout)
	p.waitFor("the foreign event's name not shown", `document.body.innerText.indexOf("bulk foreign") < 0`, pageTimeout)
	p.settle()
	p.click("#confirm")
	p.waitText(".notice", "Deleted 1 of 2 events. 1 failed", pageTimeout)
	p.waitText("#bulk-failed", foreign, pageTimeout)
	require.Equal(t, http.StatusNotFound, srv.apiStatus(t, srv.master, "GET", "/events/"+a))
	require.Equal(t, "active", status(foreign), "an event outside the token's scope is never changed")
	p.open("/ui/events/bulk?" + url.Values{"action": {"pause"}, "id": {foreign}}.Encode())
	p.waitText("#bulk-events", "None of the selected events is visible to your token", pageTimeout)
}
