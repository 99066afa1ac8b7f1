package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The event page's schedule control and history, as user stories in a real
// Chromium, on both stores. Every wait ends on what the page (or the
// receiver) shows.
func TestConsoleEventControl(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		p.signIn(srv.master)
		t.Run("pause until Monday", func(t *testing.T) { pauseStory(t, srv, p) })
		t.Run("calendar roll forward", func(t *testing.T) { calendarRollStory(t, srv, p) })
		t.Run("move one instant", func(t *testing.T) { moveStory(t, srv, p) })
	})
}

const storyZone = "Europe/Prague"

func storyLoc(t *testing.T) *time.Location {
	loc, err := time.LoadLocation(storyZone)
	require.NoError(t, err)
	return loc
}

// setPicker sets a datetime-local input the way a picker does (the typed
// form of such inputs depends on the browser's locale) and tells the page.
func (p *page) setPicker(sel string, at time.Time) {
	p.t.Helper()
	var ignored any
	p.run(pageTimeout, "set "+sel, chromedp.Evaluate(fmt.Sprintf(
		`(function(){var e=document.querySelector(%q);e.value=%q;e.dispatchEvent(new Event("input",{bubbles:true}));`+
			`e.dispatchEvent(new Event("change",{bubbles:true}));return e.value;})()`, sel, at.Format("2006-01-02T15:04:05")), &ignored))
}

// selectValue chooses an option of a select by its value.
func (p *page) selectValue(sel, value string) {
	p.t.Helper()
	var ignored any
	p.run(pageTimeout, "choose "+value+" in "+sel, chromedp.Evaluate(fmt.Sprintf(
		`(function(){var e=document.querySelector(%q);e.value=%q;e.dispatchEvent(new Event("change",{bubbles:true}));return e.value;})()`,
		sel, value), &ignored))
}

// pauseStory: an operator pauses a daily event until next Monday with a
// reason, sees the instants inside the pause marked (and those after it
// not), and finds the pause and its reason in History.
func pauseStory(t *testing.T, srv consoleServer, p *page) {
	loc := storyLoc(t)
	ok := newReceiver(t)
	ev := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "daily export",
		"start_time": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "rrule": "FREQ=DAILY",
		"timezone": storyZone, "webhook": ok.URL(), "tags": []string{"exports"}})
	id := ev["id"].(string)
	// Next Monday at least two days away, so at least two daily instants
	// fall inside the pause whatever day the test runs.
	// Counted from the first instant's day (an hour ahead: past midnight in
	// the zone during the last hour of a day), not today's.
	first := time.Now().Add(time.Hour).In(loc)
	day := time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, 2)
	for day.Weekday() != time.Monday {
		day = day.AddDate(0, 0, 1)
	}
	until := day

	p.open("/ui/events/" + id)
	p.waitFor("the pause form", `!!document.querySelector("#pause-form")`, pageTimeout)
	// The field takes the API's words and shows what they mean before
	// anything is sent; what it cannot read it says so.
	before := time.Now()
	p.fill("#p-until", "in 2 hours")
	p.waitFor("the resolved instant", `document.querySelector("#p-until-resolved").getAttribute("data-state") === "ok"`, pageTimeout)
	var resolved string
	var found bool
	p.run(pageTimeout, "read the resolved instant",
		chromedp.AttributeValue("#p-until-resolved", "data-utc", &resolved, &found, chromedp.ByQuery))
	require.True(t, found)
	at, err := time.Parse(time.RFC3339Nano, resolved)
	require.NoError(t, err)
	require.WithinRange(t, at, before.Add(2*time.Hour).Truncate(time.Second), time.Now().Add(2*time.Hour+time.Second))
	p.fill("#p-until", "tomorrow 9:00")
	p.waitFor("tomorrow at 09:00 in the event's zone", `(function(){var e=document.querySelector("#p-until-resolved");
		return e.getAttribute("data-state") === "ok" && / 09:00:00 \+0[12]:00 /.test(e.innerText);})()`, pageTimeout)
	p.fill("#p-until", "whenever")
	p.waitFor("the words it cannot read", `document.querySelector("#p-until-resolved").getAttribute("data-state") === "error"`, pageTimeout)
	p.click("#pause-submit")
	p.waitFor("the refusal under the field, what was typed kept", `(function(){
		var e = document.querySelector("#p-until ~ .field-error");
		return !!e && e.innerText.length > 0 && document.querySelector("#p-until").value === "whenever" &&
			document.querySelector("#event-status").innerText === "active";
	})()`, pageTimeout)
	p.setPicker("#p-until", until)
	// Wait for the resolved instant: it replaces the longer refusal above the
	// button, and a click while the layout moves lands on something else.
	p.waitFor("Monday resolved", fmt.Sprintf(`(function(){var e=document.querySelector("#p-until-resolved");
		return e.getAttribute("data-state") === "ok" && e.getAttribute("data-utc") === %q;})()`,
		until.UTC().Format(time.RFC3339)), pageTimeout)
	p.fill("#p-reason", "quarter-end freeze")
	p.click("#pause-submit")
	p.waitText(".notice", "Event paused until", pageTimeout)
	p.waitText("#event-status", "paused", pageTimeout)
	p.waitText("#pause", "quarter-end freeze", pageTimeout)
	p.waitText("#pause", "Paused until", pageTimeout)
	p.waitText("#pause", "Paused by", pageTimeout)
	// Every upcoming instant before Monday is marked inside the pause; the
	// ones from Monday on are not.
	p.waitFor("the instants inside the pause marked", fmt.Sprintf(`(function(){
		var lis = Array.from(document.querySelectorAll("#upcoming li"));
		if (lis.length !== 10) { return false; }
		var until = new Date(%q), inside = 0;
		for (var i = 0; i < lis.length; i++) {
			var at = new Date(lis[i].querySelector("time").getAttribute("datetime"));
			var marked = lis[i].getAttribute("data-mark") === "paused";
			if ((at < until) !== marked) { return false; }
			if (marked) { inside++; }
		}
		return inside >= 2 && inside < 10;
	})()`, until.UTC().Format(time.RFC3339)), pageTimeout)
	p.waitText("#upcoming li.paused", "inside the pause", pageTimeout)
	// One zone on the page: every time in Prague, 24-hour with the offset,
	// the UTC instant on hover, and the zone said once.
	p.waitText("#zone-note", "Times in Europe/Prague, the event's zone", pageTimeout)
	p.waitFor("every time on the page in the event's zone", `(function(){
		var ts = Array.from(document.querySelectorAll("main time"));
		return ts.length > 10 && ts.every(function(e){
			var d = new Date(e.getAttribute("datetime"));
			var off = d.getTime() >= 0 && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0[12]:00$/.test(e.textContent);
			return off && !e.hasAttribute("data-local") && / UTC$/.test(e.title);
		}) && document.querySelectorAll("#zone-note").length === 1;
	})()`, pageTimeout)
	// The next run is the first instant after the pause, with the pause.
	p.waitFor("the next run after the pause, with the pause and its reason", `(function(){
		var next = document.querySelector("#next-run time");
		var first = Array.from(document.querySelectorAll("#upcoming li")).filter(function(li){return li.getAttribute("data-mark") !== "paused";})[0];
		var text = document.querySelector("#next-run").innerText;
		return !!next && !!first && next.getAttribute("datetime") === first.querySelector("time").getAttribute("datetime") &&
			text.indexOf("paused until") > 0 && text.indexOf("(quarter-end freeze)") > 0;
	})()`, pageTimeout)
	p.shot("console-event-paused", 1280, false)
	p.shot("console-event-paused-phone", 390, false)

	// Follow the History tab's link through the harness's navigation, so
	// the checks it runs on every page apply to the tab too.
	var href string
	p.run(pageTimeout, "read the History tab's link",
		chromedp.AttributeValue("#tab-history", "href", &href, &found, chromedp.ByQuery))
	require.True(t, found)
	p.open(href)
	p.waitFor("the History tab", `!!document.querySelector("#changes") &&
		document.querySelector("#tab-history").getAttribute("aria-current") === "page"`, pageTimeout)
	p.waitFor("the pause with its reason in History", `(function(){
		var li = document.querySelector('#changes li[data-action="pause"]');
		return !!li && li.innerText.indexOf("quarter-end freeze") >= 0 && li.innerText.indexOf("via console") >= 0;
	})()`, pageTimeout)
	p.waitText(`#changes li[data-action="create"]`, "via api", pageTimeout)
	p.shot("console-event-history", 1280, false)
	p.shot("console-event-history-phone", 390, false)

	// Resumed from the page, skipping what fell inside the pause.
	p.open("/ui/events/" + id)
	p.selectValue("#r-catchup", "skip")
	p.click("#resume")
	p.waitText(".notice", "Event resumed", pageTimeout)
	p.waitText("#event-status", "active", pageTimeout)
	p.waitFor("no instant marked paused any more", `document.querySelectorAll("#upcoming li").length === 10 &&
		document.querySelectorAll("#upcoming li.paused").length === 0`, pageTimeout)
}

// calendarRollStory: a calendar of public holidays (made over the API: the
// calendars page is its own story) is attached in the edit form with
// roll_forward; the live preview shows the holidays' instants rolled to
// the next day, and so does the saved event's page. The event fires every
// other day: under a plain daily rule the next day already has its own
// instant, so the planner skips a blocked one instead of rolling it.
func calendarRollStory(t *testing.T, srv consoleServer, p *page) {
	loc := storyLoc(t)
	ok := newReceiver(t)
	now := time.Now().In(loc)
	first := time.Date(now.Year(), now.Month(), now.Day(), 9, 0, 0, 0, loc).AddDate(0, 0, 1)
	holidays := []time.Time{first.AddDate(0, 0, 2), first.AddDate(0, 0, 6)}
	cal := srv.api(t, srv.master, "POST", "/calendars", map[string]any{"name": "public holidays", "timezone": storyZone,
		"dates": []string{holidays[0].Format("2006-01-02"), holidays[1].Format("2006-01-02")}, "tags": []string{"ops"}})
	calID := cal["id"].(string)
	ev := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "backup rotation",
		"start_time": first.Format(time.RFC3339), "rrule": "FREQ=DAILY;INTERVAL=2;BYHOUR=9;BYMINUTE=0;BYSECOND=0",
		"timezone": storyZone, "webhook": ok.URL(), "tags": []string{"ops"}})
	id := ev["id"].(string)

	p.open("/ui/events/" + id + "/edit")
	p.waitFor("the edit form's preview", `document.querySelectorAll("#preview-list li").length === 10`, pageTimeout)
	sel := fmt.Sprintf(`select[data-calendar=%q]`, calID)
	p.waitFor("the holidays calendar offered", fmt.Sprintf(`(function(){var s=document.querySelector(%q);
		return !!s && document.querySelector('label[for="'+s.id+'"]').innerText.indexOf("public holidays") >= 0;})()`, sel), pageTimeout)
	p.selectValue(sel, "roll_forward")
	rolled := func(where string) string {
		return fmt.Sprintf(`(function(){
			var lis = Array.from(document.querySelectorAll(%q));
			var got = lis.filter(function(li){return li.getAttribute("data-mark") === "rolled";})
				.map(function(li){return li.getAttribute("data-local") || li.querySelector("time").getAttribute("datetime");});
			return lis.length === 10 && got.length === 2 && got[0].indexOf(%q) === 0 && got[1].indexOf(%q) === 0;
		})()`, where, holidays[0].AddDate(0, 0, 1).Format("2006-01-02T09:00"), holidays[1].AddDate(0, 0, 1).Format("2006-01-02T09:00"))
	}
	p.waitFor("the holidays' instants rolled to the next day in the preview", rolled("#preview-list li"), pageTimeout)
	p.waitText("#preview-list li.rolled", "rolled from", pageTimeout)
	p.shot("console-event-form-calendars", 1280, false)
	p.shot("console-event-form-calendars-phone", 390, false)
	p.click(`#event-form button[type=submit]`)
	p.waitText(".notice", "Event saved", pageTimeout)
	p.waitText("#calendars", "public holidays · roll_forward", pageTimeout)
	// The event page lists instants as UTC datetimes: compare those.
	p.waitFor("the rolled instants on the event page", fmt.Sprintf(`(function(){
		var got = Array.from(document.querySelectorAll("#upcoming li.rolled > time")).map(function(e){return e.getAttribute("datetime");});
		return got.length === 2 && got[0] === %q && got[1] === %q;
	})()`, holidays[0].AddDate(0, 0, 1).UTC().Format(time.RFC3339Nano), holidays[1].AddDate(0, 0, 1).UTC().Format(time.RFC3339Nano)),
		pageTimeout)
}

// moveStory: an operator moves the next instant of a daily event, an hour
// away, to a few seconds from now with the date-time picker (in the
// event's zone), sees it marked moved, and the receiver gets it then —
// not before, and not at the old time.
func moveStory(t *testing.T, srv consoleServer, p *page) {
	loc := storyLoc(t)
	rc := newReceiver(t)
	var mu sync.Mutex
	var arrived time.Time
	rc.setBehaviour(func(w http.ResponseWriter, r *http.Request, d delivery) {
		mu.Lock()
		if arrived.IsZero() {
			arrived = time.Now()
		}
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	ev := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "cache warm-up",
		"start_time": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "rrule": "FREQ=DAILY",
		"timezone": storyZone, "webhook": rc.URL(), "tags": []string{"cache"}})
	id := ev["id"].(string)

	p.open("/ui/events/" + id)
	p.waitFor("the skip-or-move form", `!!document.querySelector("#exception-form") && document.querySelectorAll("#x-at option").length === 10`,
		pageTimeout)
	// The first option is the next instant, an hour away.
	p.click("#x-move")
	to := time.Now().Add(30 * time.Second).Truncate(time.Second).In(loc)
	p.setPicker("#x-to", to)
	p.fill("#x-reason", "warm before the launch")
	p.click("#exception-submit")
	p.waitText(".notice", "Moved", pageTimeout)
	p.waitText("#upcoming li.moved", "moved from", pageTimeout)
	p.waitFor("the moved instant first, at the new time", fmt.Sprintf(
		`document.querySelector("#upcoming li:first-child time").getAttribute("datetime") === %q`,
		to.UTC().Format(time.RFC3339Nano)), pageTimeout)
	p.waitText("#exceptions", "warm before the launch", pageTimeout)

	var got time.Time
	eventually(t, time.Until(to)+fireTimeout, "the receiver got the moved instant", func() bool {
		mu.Lock()
		defer mu.Unlock()
		got = arrived
		return !got.IsZero()
	})
	require.False(t, got.Before(to), "delivered at %s, before the moved time %s", got, to)
	require.True(t, got.Before(to.Add(fireTimeout)), "delivered at %s, long after the moved time %s", got, to)
	// The outcome is recorded just after the answer: reload until it shows.
	p.reloadUntil("/ui/events/"+id, "the delivery listed completed, moved from its planned time",
		`(function(){var h=document.querySelector("#history");
		return !!h && h.innerText.indexOf("moved from") >= 0 && h.innerText.indexOf("completed") >= 0;})()`, fireTimeout)
	require.Contains(t, p.text("#history"), "completed")
}
