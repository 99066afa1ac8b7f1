package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestConsolePunctuality reads the Punctuality page as a team's operator
// does: their events' instants delivered (one on time and succeeding, one on
// time and failing, one late: its event paused over the instant and resumed
// firing what it held), another team's left out; the figures, sorting the
// table by a column with the mouse and the keyboard, the trend chart, the
// Reports tabs, grouping by tag, a custom window, a refused tolerance named
// under its field, and a window with nothing due.
func TestConsolePunctuality(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		ok, failing, held := newReceiver(t), newReceiver(t), newReceiver(t)
		// When the on-time deliveries arrived: they bound how late this
		// machine fires, and so the tolerance that keeps them on time.
		var mu sync.Mutex
		var arrivals []time.Time
		arrived := func(status int) behaviour {
			return func(w http.ResponseWriter, r *http.Request, d delivery) {
				mu.Lock()
				arrivals = append(arrivals, time.Now())
				mu.Unlock()
				answer(status)(w, r, d)
			}
		}
		ok.setBehaviour(arrived(http.StatusOK))
		failing.setBehaviour(arrived(http.StatusInternalServerError))

		// Due in a few seconds: scheduled deliveries, whose lateness counts.
		instant := time.Now().Add(5 * time.Second).UTC().Truncate(time.Second)
		at := instant.Format(time.RFC3339)
		once := map[string]any{"max_attempts": 1}
		var lateID string
		for _, ev := range []map[string]any{
			{"name": "nightly export", "start_time": at, "webhook": ok.URL(), "tags": []string{"ops"}},
			{"name": "invoice sync", "start_time": at, "webhook": failing.URL(), "tags": []string{"ops"}, "retry": once},
			{"name": "weekly report", "start_time": at, "webhook": held.URL(), "tags": []string{"ops"}},
			{"name": "sales digest", "start_time": at, "webhook": ok.URL(), "tags": []string{"sales"}},
		} {
			created := srv.api(t, srv.master, "POST", "/events", ev)
			if ev["name"] == "weekly report" {
				lateID = created["id"].(string)
				srv.api(t, srv.master, "POST", "/events/"+lateID+"/pause", map[string]any{"catch_up": "fire"})
			}
		}
		tok := srv.api(t, srv.master, "POST", "/tokens", map[string]any{"sub": "ops-viewer", "access": "read",
			"scope": []string{"ops"}, "expires_at": "in 1 day"})
		ok.waitReceived(t, 2, fireTimeout)
		failing.waitReceived(t, 1, fireTimeout)

		// The tolerance: a step of the report's ladder above the latest
		// on-time arrival; the held instant is resumed once it is further
		// past than that, so it is late whatever the load.
		mu.Lock()
		var seen time.Duration
		for _, a := range arrivals {
			seen = max(seen, a.Sub(instant))
		}
		mu.Unlock()
		tolerance, shown := time.Minute, "1m0s"
		for _, d := range []struct {
			d    time.Duration
			text string
		}{{time.Second, "1.0 s"}, {2 * time.Second, "2.0 s"}, {5 * time.Second, "5.0 s"}, {10 * time.Second, "10.0 s"}, {30 * time.Second, "30.0 s"}} {
			if seen+500*time.Millisecond < d.d {
				tolerance, shown = d.d, d.text
				break
			}
		}
		resumeAt := instant.Add(tolerance + 500*time.Millisecond)
		eventually(t, tolerance+time.Minute, "the held instant further past than the tolerance",
			func() bool { return time.Now().After(resumeAt) })
		srv.api(t, srv.master, "POST", "/events/"+lateID+"/resume", map[string]any{})
		held.waitReceived(t, 1, fireTimeout)
		p.signIn(tok["token"].(string))

		// The Overview's Reports tabs lead to the page.
		p.click("#nav-punctuality")
		p.waitFor("the Punctuality page, its tab current", `!!document.querySelector("#punctuality-form") &&
			document.querySelector("#nav-punctuality").getAttribute("aria-current") === "page"`, pageTimeout)

		path := "/ui/punctuality?range=24h&tolerance=" + tolerance.String()
		p.reloadUntil(path, "the team's three instants, ended", `document.querySelector("#pu-due") &&
			document.querySelector("#pu-due").innerText === "3" &&
			document.querySelector("#pu-success").innerText === "66.7 %" &&
			document.querySelectorAll("#punctuality tbody tr").length === 3`, pageTimeout)
		p.waitFor("the figures, the other team's event not shown", fmt.Sprintf(`(function(){
			var t = document.querySelector("#punctuality").innerText;
			var late = document.querySelector('#punctuality tbody tr[data-key=%q] td:nth-of-type(3)');
			return t.indexOf("nightly export") >= 0 && t.indexOf("invoice sync") >= 0 && t.indexOf("weekly report") >= 0 &&
				t.indexOf("sales digest") < 0 && late && late.innerText === "1" &&
				document.querySelector("#pu-on-time").innerText === "66.7 %%" &&
				document.querySelector("#punctuality-tolerance").innerText === %q &&
				document.querySelector("#punctuality tfoot th").innerText === "All";
		})()`, lateID, shown), pageTimeout)
		p.waitFor("the trend chart drawn, both series", `(function(){
			var c = document.querySelector("#punctuality-chart .uplot");
			return !!c && c.innerText.indexOf("on time %") >= 0 && c.innerText.indexOf("due") >= 0;
		})()`, pageTimeout)
		p.waitFor("times said once, in the browser's zone", `!!document.querySelector("#punctuality-window time[data-local]") &&
			!document.getElementById("zone-note").hidden`, pageTimeout)

		// Sorting by Late with the mouse: ascending (ties keep the name
		// order), then descending, the late row moving to the top.
		firstRow := `document.querySelector("#punctuality tbody tr th").innerText`
		lateHead := `#punctuality thead th:nth-child(4) button`
		sorted := func(dir, first string) string {
			return fmt.Sprintf(`%s === %q && document.querySelector("#punctuality thead th:nth-child(4)").getAttribute("aria-sort") === %q &&
				!document.querySelector("#punctuality thead th:nth-child(1)").hasAttribute("aria-sort")`, firstRow, first, dir)
		}
		p.click(lateHead)
		p.waitFor("sorted by late, ascending", sorted("ascending", "invoice sync"), pageTimeout)
		p.click(lateHead)
		p.waitFor("sorted by late, descending", sorted("descending", "weekly report"), pageTimeout)
		p.shot("console-punctuality", 1280, false)
		p.shot("console-punctuality-phone", 390, false)

		// The keyboard sorts too: Enter on the Failed heading's button.
		failedHead := `#punctuality thead th:nth-child(7) button`
		p.run(pageTimeout, "press Enter on the Failed heading", chromedp.Focus(failedHead, chromedp.ByQuery),
			chromedp.KeyEvent(kb.Enter))
		lastRow := `document.querySelector("#punctuality tbody tr:last-child th").innerText`
		p.waitFor("sorted by failed, ascending", fmt.Sprintf(`%s === "invoice sync" &&
			document.querySelector("#punctuality thead th:nth-child(7)").getAttribute("aria-sort") === "ascending"`, lastRow),
			pageTimeout)
		p.run(pageTimeout, "press Enter again", chromedp.KeyEvent(kb.Enter))
		p.waitFor("sorted by failed, descending", fmt.Sprintf(`%s === "invoice sync" &&
			document.querySelector("#punctuality thead th:nth-child(7)").getAttribute("aria-sort") === "descending"`, firstRow),
			pageTimeout)

		p.open("/ui/punctuality?range=24h&group_by=tag&tolerance=" + tolerance.String())
		p.waitFor("one row for the team's tag", `document.querySelectorAll("#punctuality tbody tr").length === 1 &&
			document.querySelector("#punctuality tbody tr th").innerText === "ops" &&
			document.querySelector("#punctuality tbody tr td:nth-of-type(3)").innerText === "1"`, pageTimeout)

		// A custom window: From and To apply only once "custom" is chosen.
		p.open("/ui/punctuality?range=24h")
		p.waitFor("From and To off under a preset", `document.querySelector("#pu-from").disabled &&
			document.querySelector("#pu-to").disabled`, pageTimeout)
		p.selectValue("#pu-range", "custom")
		p.waitFor("From and To on for a custom window", `!document.querySelector("#pu-from").disabled &&
			!document.querySelector("#pu-to").disabled`, pageTimeout)
		p.fill("#pu-from", "36 hours ago")
		p.click(`#punctuality-form button[type=submit]`)
		p.waitFor("the custom window's report, its trend per hour", `location.search.indexOf("range=custom") >= 0 &&
			document.querySelector("#pu-from").value === "36 hours ago" && !document.querySelector("#pu-from").disabled &&
			document.querySelector("#pu-due") && document.querySelector("#pu-due").innerText === "3" &&
			document.querySelector("#punctuality-chart").closest("section").querySelector("h2").innerText === "Trend, per hour"`,
			pageTimeout)

		p.open("/ui/punctuality?range=24h&tolerance=soon")
		p.waitText("#pu-tolerance-error", "duration", pageTimeout)
		p.open("/ui/punctuality?range=24h&tag=nobody")
		p.waitText("#punctuality-empty", "Nothing was due in this window", pageTimeout)
	})
}
