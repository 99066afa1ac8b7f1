package e2e

import (
	"testing"
	"time"
)

// TestConsoleLiveShowsEveryDelivery: Live without a tag filter follows every
// event the signed-in token can read, untagged ones too, and a scoped
// token's page shows its own tags' deliveries and nobody else's.
func TestConsoleLiveShowsEveryDelivery(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		ok := newReceiver(t)
		later := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		create := func(name string, tags ...string) string {
			if tags == nil {
				tags = []string{}
			}
			ev := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": name, "start_time": later,
				"webhook": ok.URL(), "tags": tags})
			return ev["id"].(string)
		}
		trigger := func(id string) { srv.api(t, srv.master, "POST", "/events/"+id+"/trigger", map[string]any{}) }
		untagged, sales, ops := create("untagged sync"), create("sales digest", "sales"), create("ops export", "ops")
		listening := `document.querySelector("#live-state").getAttribute("data-state") === "listening"`

		p.signIn(srv.master)
		p.open("/ui/live")
		p.waitFor("the live stream listening", listening, pageTimeout)
		p.waitText("#live-state", "every event your token can read", pageTimeout)
		trigger(untagged)
		p.waitText("#live-rows", "untagged sync", fireTimeout)
		p.waitText("#live-rows .live-status", "completed", fireTimeout)

		tok := srv.api(t, srv.master, "POST", "/tokens", map[string]any{"sub": "ops-watcher", "access": "read",
			"scope": []string{"ops"}, "expires_at": "in 1 day"})
		p.click(`form[action="/ui/logout"] button`)
		p.waitFor("signed out", `!!document.querySelector("#token")`, pageTimeout)
		p.signIn(tok["token"].(string))
		p.open("/ui/live")
		p.waitFor("the scoped live stream listening", listening, pageTimeout)
		trigger(untagged)
		trigger(sales)
		trigger(ops)
		p.waitText("#live-rows", "ops export", fireTimeout)
		p.waitFor("nobody else's deliveries", `(function(){
			var t = document.querySelector("#live-rows").innerText;
			return t.indexOf("untagged sync") < 0 && t.indexOf("sales digest") < 0;
		})()`, pageTimeout)
	})
}
