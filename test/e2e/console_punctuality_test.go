package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestConsolePunctuality reads the Punctuality page as a team's operator
// does: their events' instants delivered (one succeeding, one failing),
// another team's left out, the figures, sorting the table by a column and
// back, the trend chart, grouping by tag, a refused tolerance named under
// its field, and a window with nothing due.
func TestConsolePunctuality(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		ok, failing := newReceiver(t), newReceiver(t)
		failing.setBehaviour(answer(http.StatusInternalServerError))
		// Due in a few seconds: scheduled deliveries, whose lateness counts.
		soon := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339)
		once := map[string]any{"max_attempts": 1}
		for _, ev := range []map[string]any{
			{"name": "nightly export", "start_time": soon, "webhook": ok.URL(), "tags": []string{"ops"}},
			{"name": "invoice sync", "start_time": soon, "webhook": failing.URL(), "tags": []string{"ops"}, "retry": once},
			{"name": "sales digest", "start_time": soon, "webhook": ok.URL(), "tags": []string{"sales"}},
		} {
			srv.api(t, srv.master, "POST", "/events", ev)
		}
		tok := srv.api(t, srv.master, "POST", "/tokens", map[string]any{"sub": "ops-viewer", "access": "read",
			"scope": []string{"ops"}, "expires_at": "in 1 day"})
		ok.waitReceived(t, 2, fireTimeout)
		failing.waitReceived(t, 1, fireTimeout)
		p.signIn(tok["token"].(string))

		// A minute's tolerance: on a busy machine a delivery may be late by
		// seconds, never by a minute.
		const path = "/ui/punctuality?range=24h&tolerance=1m"
		p.reloadUntil(path, "the team's two instants, ended", `document.querySelector("#pu-due") &&
			document.querySelector("#pu-due").innerText === "2" &&
			document.querySelector("#pu-success").innerText === "50.0 %" &&
			document.querySelectorAll("#punctuality tbody tr").length === 2`, pageTimeout)
		p.waitFor("the figures, the other team's event not shown", `(function(){
			var t = document.querySelector("#punctuality").innerText;
			return t.indexOf("nightly export") >= 0 && t.indexOf("invoice sync") >= 0 && t.indexOf("sales digest") < 0 &&
				document.querySelector("#pu-on-time").innerText === "100.0 %" &&
				document.querySelector("#punctuality-tolerance").innerText === "1m0s" &&
				document.querySelector("#punctuality tfoot th").innerText === "All";
		})()`, pageTimeout)
		p.waitFor("the trend chart drawn", `!!document.querySelector("#punctuality-chart .uplot")`, pageTimeout)
		p.waitFor("times said once, in the browser's zone", `!!document.querySelector("#punctuality-window time[data-local]") &&
			!document.getElementById("zone-note").hidden`, pageTimeout)

		// Sorting by Failed: ascending, then descending, the rows moving.
		firstRow := `document.querySelector("#punctuality tbody tr th").innerText`
		failedHead := `#punctuality thead th:nth-child(7) button`
		p.click(failedHead)
		p.waitFor("sorted by failed, ascending", fmt.Sprintf(`%s === "nightly export" &&
			document.querySelector("#punctuality thead th:nth-child(7)").getAttribute("aria-sort") === "ascending"`, firstRow),
			pageTimeout)
		p.click(failedHead)
		p.waitFor("sorted by failed, descending", fmt.Sprintf(`%s === "invoice sync" &&
			document.querySelector("#punctuality thead th:nth-child(7)").getAttribute("aria-sort") === "descending"`, firstRow),
			pageTimeout)
		p.shot("console-punctuality", 1280, false)

		p.open("/ui/punctuality?range=24h&tolerance=1m&group_by=tag")
		p.waitFor("one row for the team's tag", `document.querySelectorAll("#punctuality tbody tr").length === 1 &&
			document.querySelector("#punctuality tbody tr th").innerText === "ops"`, pageTimeout)

		p.open("/ui/punctuality?range=24h&tolerance=soon")
		p.waitText("#pu-tolerance-error", "duration", pageTimeout)
		p.open("/ui/punctuality?range=24h&tag=nobody")
		p.waitText("#punctuality-empty", "Nothing was due in this window", pageTimeout)
	})
}
