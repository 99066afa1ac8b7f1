package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An operator backfills the hours an hourly event would have fired before
// it started: From and To picked in the event's zone, the counts in the
// notice, the four rows with the reason backfill on the event page and the
// receiver getting each once; a repeat creates nothing; To in the future is
// refused under To; a paused event says why it offers no form.
func TestConsoleBackfill(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		p.signIn(srv.master)
		backfillStory(t, srv, p)
	})
}

// consoleTimeLayout is how the console writes an instant in a notice.
const consoleTimeLayout = "2006-01-02 15:04:05 -07:00"

func backfillStory(t *testing.T, srv consoleServer, p *page) {
	loc, err := time.LoadLocation("Europe/Prague")
	require.NoError(t, err)
	rc := newReceiver(t)
	// The series starts in two whole hours, so nothing fires by itself
	// while the story runs.
	start := time.Now().UTC().Truncate(time.Hour).Add(2 * time.Hour)
	ev := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "hourly ledger sync",
		"start_time": start.Format(time.RFC3339), "rrule": "FREQ=HOURLY", "timezone": "Europe/Prague",
		"webhook": rc.URL()})
	id := ev["id"].(string)
	page := "/ui/events/" + id
	// The four hours from six to three before the start, all past.
	from, to := start.Add(-6*time.Hour), start.Add(-3*time.Hour)
	var want []string
	for at := from; !at.After(to); at = at.Add(time.Hour) {
		want = append(want, at.Format(time.RFC3339Nano))
	}
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	// backfillRows: the sorted instants of the page's deliveries that say
	// backfill (and status, when set) are the four.
	backfillRows := func(status string) string {
		return fmt.Sprintf(`(function(){
			var rows = Array.prototype.filter.call(document.querySelectorAll("#history tbody tr"), function(tr){
				var said = tr.cells[1].innerText;
				return said.indexOf("backfill") >= 0 && said.indexOf(%q) >= 0;
			});
			return JSON.stringify(rows.map(function(tr){
				return new Date(tr.querySelector("td time").getAttribute("datetime")).toISOString().replace(".000Z", "Z");
			}).sort());
		})() === %q`, status, wantJSON)
	}

	p.open(page)
	p.waitFor("the backfill form, its box ticked",
		`!!document.querySelector("#backfill-form") && document.querySelector("#bf-respect").checked`, pageTimeout)
	p.setPicker("#bf-from", from.In(loc))
	p.setPicker("#bf-to", to.In(loc))
	p.click("#backfill-submit")
	p.waitText(".notice", "4 created, 0 skipped, 0 already existed", pageTimeout)
	p.waitText(".notice", from.In(loc).Format(consoleTimeLayout)+" to "+to.In(loc).Format(consoleTimeLayout), pageTimeout)
	p.waitFor("the four backfilled rows among the deliveries", backfillRows(""), pageTimeout)

	// They are due now: the receiver gets each once.
	listed := srv.api(t, srv.master, "GET", "/occurrences?event_id="+id+"&reason=backfill", nil)["data"].([]any)
	require.Len(t, listed, 4)
	var ids []string
	for _, o := range listed {
		ids = append(ids, o.(map[string]any)["id"].(string))
	}
	sort.Strings(ids)
	require.Eventually(t, func() bool {
		got := rc.counts()
		for _, id := range ids {
			if got[id] != 1 {
				return false
			}
		}
		return len(got) == 4
	}, pageTimeout, 50*time.Millisecond, "the receiver got the four backfilled occurrences once each")
	p.reloadUntil(page, "the four backfilled rows completed", backfillRows("completed"), pageTimeout)

	// The occurrence's own page names the reason.
	p.open("/ui/occurrences/" + ids[0])
	p.waitText("#reason", "backfill", pageTimeout)
	p.waitText("#occurrence-status", "completed", pageTimeout)

	// The same range again: every instant already has its occurrence.
	p.open(page)
	p.setPicker("#bf-from", from.In(loc))
	p.setPicker("#bf-to", to.In(loc))
	p.click("#backfill-submit")
	p.waitText(".notice", "0 created, 0 skipped, 4 already existed", pageTimeout)

	// History says who backfilled, through the console.
	p.open(page + "?tab=history")
	p.waitFor("a backfill entry in History", `(function(){
		var li = document.querySelector('#changes li[data-action="backfill"]');
		return !!li && li.innerText.indexOf("via console") >= 0; })()`, pageTimeout)

	// To in the future: the API's refusal under To, From kept as picked.
	p.open(page)
	p.setPicker("#bf-from", from.In(loc))
	p.setPicker("#bf-to", time.Now().Add(2*time.Hour).In(loc))
	p.click("#backfill-submit")
	p.waitFor("the refusal under To", `(function(){
		var to = document.querySelector("#bf-to"), err = document.querySelector("#bf-to + .field-error");
		return !!to && to.getAttribute("aria-invalid") === "true" && !!err && err.innerText.indexOf("future") >= 0;
	})()`, pageTimeout)
	p.waitFor("From kept as picked", fmt.Sprintf(`document.querySelector("#bf-from").value.indexOf(%q) === 0 &&
		!document.querySelector("#bf-from").hasAttribute("aria-invalid")`, from.In(loc).Format("2006-01-02T15:04")), pageTimeout)
	require.Len(t, rc.counts(), 4, "nothing more was sent")

	// Paused, the event says why there is no form.
	srv.api(t, srv.master, "POST", "/events/"+id+"/pause", map[string]any{})
	p.open(page)
	p.waitFor("the paused explanation instead of the form",
		`!!document.querySelector("#backfill-paused") && !document.querySelector("#backfill-form")`, pageTimeout)
}
