package e2e

import (
	"fmt"
	"testing"
	"time"
)

// Live shows every delivery the signed-in token may see: an untagged
// event's for the master token; for a token scoped to a team, the team's
// and nobody else's, tagged or not. The tags field filters.
func TestConsoleLiveShowsEveryVisibleDelivery(t *testing.T) {
	onBothStores(t, consolePostgres, liveStory)
}

func liveStory(t *testing.T, srv consoleServer, p *page) {
	ok := newReceiver(t)
	later := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	event := func(name string, tags ...string) string {
		body := map[string]any{"name": name, "start_time": later, "webhook": ok.URL()}
		if len(tags) > 0 {
			body["tags"] = tags
		}
		return srv.api(t, srv.master, "POST", "/events", body)["id"].(string)
	}
	trigger := func(id string) string {
		return srv.api(t, srv.master, "POST", "/events/"+id+"/trigger", map[string]any{})["id"].(string)
	}
	row := func(occ string) string {
		return fmt.Sprintf(`document.querySelector('#live-rows tr[data-occurrence="%s"]')`, occ)
	}
	untagged, sales, ops := event("untagged ping"), event("sales export", "sales"), event("ops backup", "ops")

	// The operator (master token) follows everything: the untagged event's
	// delivery shows, and completes.
	p.signIn(srv.master)
	p.open("/ui/live")
	p.waitFor("the live stream listening", `document.querySelector("#live-state").getAttribute("data-state") === "listening"`,
		pageTimeout)
	p.waitText("#live-state", "every event you may see", pageTimeout)
	occ := trigger(untagged)
	p.waitFor("the untagged delivery's row", "!!"+row(occ), fireTimeout)
	p.waitText("#live-rows", "untagged ping", pageTimeout)
	p.waitFor("its status followed to completed", row(occ)+`.querySelector(".live-status").innerText.indexOf("completed") === 0`,
		fireTimeout)

	// A token scoped to ops sees ops' deliveries only.
	tok := srv.api(t, srv.master, "POST", "/tokens", map[string]any{"sub": "ops-live", "access": "read",
		"scope": []string{"ops"}, "expires_at": "in 1 day"})
	p.click(".signout button")
	p.waitFor("the sign-in form", `!!document.querySelector("#token")`, pageTimeout)
	p.signIn(tok["token"].(string))
	p.open("/ui/live")
	p.waitFor("the live stream listening", `document.querySelector("#live-state").getAttribute("data-state") === "listening"`,
		pageTimeout)
	hidden := []string{trigger(untagged), trigger(sales)}
	for _, id := range hidden {
		waitStatus(t, srv, id, "completed")
	}
	shown := trigger(ops)
	p.waitFor("the team's delivery", "!!"+row(shown), fireTimeout)
	for _, id := range hidden {
		p.waitFor("another team's or an untagged delivery not shown", "!"+row(id), pageTimeout)
	}
	p.waitFor("only one row", `document.querySelectorAll("#live-rows tr").length === 1`, pageTimeout)

	// The tags field filters; a tag outside the token's scope is refused.
	p.open("/ui/live?tags=sales")
	p.waitText("#live-state", "tags: outside token scope", pageTimeout)
	p.open("/ui/live?tags=ops")
	p.waitText("#live-state", "Listening to tags: ops", pageTimeout)
}

// waitStatus waits until the API shows the occurrence in status.
func waitStatus(t *testing.T, srv consoleServer, id, status string) {
	t.Helper()
	eventually(t, fireTimeout, "occurrence "+id+" "+status, func() bool {
		return srv.api(t, srv.master, "GET", "/occurrences/"+id, nil)["status"] == status
	})
}
