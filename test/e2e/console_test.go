package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

// Bounds of the browser tests' waits: generous, because two cores are
// shared, but every wait ends on what the page shows.
const (
	pageTimeout = 60 * time.Second
	fireTimeout = 60 * time.Second
)

var masterTokenLine = regexp.MustCompile(`Master token[^\n]*\n\s+(\S+)`)

// chromiumPath finds Debian's chromium. Outside CI a missing browser skips
// the test with a message; in CI (CI set) it is a failure.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (apt-get install chromium); .ci/run installs it")
	}
	t.Skip("chromium is not installed: apt-get install chromium to run the console's browser tests")
	return ""
}

// browser starts a headless Chromium with a fresh profile and returns a
// tab's context, closed at cleanup.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe := chromiumPath(t)
	// Not t.TempDir: Chromium's helper processes may still write to the
	// profile for a moment after the browser exits.
	profile, err := os.MkdirTemp("", "qhronos-chromium-")
	require.NoError(t, err)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 900),
		// chromedp's own bounds on the start (20 s to print the DevTools
		// address, 10 s to dial it) are shorter than the timer below: on a
		// loaded machine (load 27, the suite beside a second copy) the dial
		// alone ran out. The timer is the one bound.
		chromedp.WSURLReadTimeout(pageTimeout),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithBrowserOption(chromedp.WithDialTimeout(pageTimeout)))
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		if !qhronostest.Eventually(10*time.Second, nil, func() bool { return os.RemoveAll(profile) == nil }) {
			t.Logf("could not remove the browser profile %s", profile)
		}
	})
	// The first Run starts the browser; it must get ctx itself, since
	// cancelling the context of that first Run closes the browser. The start
	// is bounded by a timer that cancels the allocator.
	timer := time.AfterFunc(pageTimeout, cancelAlloc)
	err = chromedp.Run(ctx)
	require.True(t, timer.Stop(), "chromium did not start within %s", pageTimeout)
	require.NoError(t, err, "start chromium")
	ctx, err = watchBrowser(ctx)
	require.NoError(t, err, "install the CSP and error recorders")
	return ctx
}

// consoleServer is a running qhronosd and a token that may do everything.
type consoleServer struct {
	url, master string
	// logs is what the server wrote to stderr so far.
	logs func() string
}

func consoleSQLite(t *testing.T) consoleServer {
	p := start(t, "console-sqlite", map[string]string{"QHRONOS_SCHEDULER_MAX_SLEEP": "250ms",
		"QHRONOS_LOG_LEVEL": "warn"})
	eventually(t, readyTimeout, "the banner shows the master token", func() bool {
		return masterTokenLine.MatchString(p.stderr.String())
	})
	m := masterTokenLine.FindStringSubmatch(p.stderr.String())
	return consoleServer{url: p.url, master: m[1], logs: p.stderr.String}
}

func consolePostgres(t *testing.T) consoleServer {
	d := newDeployment(t)
	d.withSharedRedis()
	p := d.start("console-postgres")
	return consoleServer{url: p.url, master: d.token, logs: p.stderr.String}
}

// api calls the REST API directly (what another client does meanwhile).
func (s consoleServer) api(t *testing.T, token, method, path string, body any) map[string]any {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Less(t, res.StatusCode, 300, "%s %s: %s", method, path, raw)
	out := map[string]any{}
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(t, json.Unmarshal(raw, &out))
	}
	return out
}

// page drives one browser tab against one server.
type page struct {
	t    *testing.T
	ctx  context.Context
	base string
	// shots, when set, is where screenshots are written.
	shots string
}

func (p *page) run(timeout time.Duration, what string, actions ...chromedp.Action) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		var loc, body string
		dctx, dcancel := context.WithTimeout(p.ctx, 3*time.Second)
		_ = chromedp.Run(dctx, chromedp.Location(&loc), chromedp.Evaluate(`document.body ? document.body.innerText : ""`, &body))
		dcancel()
		p.t.Fatalf("%s: %v\nat %s, the page shows:\n%s", what, err, loc, qhronostest.Tail(body, 3000))
	}
}

func (p *page) open(path string) {
	p.t.Helper()
	p.run(pageTimeout, "open "+path, chromedp.Navigate(p.base+path), chromedp.WaitReady("body", chromedp.ByQuery))
	// On a busy machine the body found may still be the blank document the
	// tab had before the navigation committed: audit the page once it is
	// the one asked for (or where it redirected), fully loaded.
	p.waitFor("the page at "+path+" to load",
		`location.href !== "about:blank" && document.readyState === "complete" && !!document.title`, pageTimeout)
	p.audit()
}

// waitFor waits until the JavaScript expression holds on the page. An
// evaluation that fails because the page is navigating counts as "not yet".
func (p *page) waitFor(what, expr string, timeout time.Duration) {
	p.t.Helper()
	held := qhronostest.Eventually(timeout, nil, func() bool {
		ctx, cancel := context.WithTimeout(p.ctx, pageTimeout)
		defer cancel()
		var ok bool
		return chromedp.Run(ctx, chromedp.Evaluate(expr, &ok)) == nil && ok
	})
	if !held {
		var loc, body string
		ctx, cancel := context.WithTimeout(p.ctx, 3*time.Second)
		_ = chromedp.Run(ctx, chromedp.Location(&loc), chromedp.Evaluate(`document.body ? document.body.innerText : ""`, &body))
		cancel()
		p.t.Fatalf("timed out after %s waiting until %s\nat %s, the page shows:\n%s", timeout, what, loc, qhronostest.Tail(body, 3000))
	}
	p.audit()
}

// waitText waits until the element matching sel contains text.
func (p *page) waitText(sel, text string, timeout time.Duration) {
	p.t.Helper()
	p.waitFor(fmt.Sprintf("%s shows %q", sel, text), fmt.Sprintf(
		`(function(){var e=document.querySelector(%q);return !!e && e.innerText.indexOf(%q) >= 0;})()`, sel, text),
		timeout)
}

// reloadUntil re-opens path until expr holds: for server-rendered pages
// whose content changes with deliveries happening meanwhile.
func (p *page) reloadUntil(path, what, expr string, timeout time.Duration) {
	p.t.Helper()
	var ok bool
	shown := qhronostest.Eventually(timeout, nil, func() bool {
		ctx, cancel := context.WithTimeout(p.ctx, pageTimeout)
		defer cancel()
		ok = false
		err := chromedp.Run(ctx, chromedp.Navigate(p.base+path), chromedp.WaitReady("body", chromedp.ByQuery),
			chromedp.Evaluate(expr, &ok))
		return err == nil && ok
	})
	if !shown {
		var body string
		_ = chromedp.Run(p.ctx, chromedp.Evaluate(`document.body.innerText`, &body))
		p.t.Fatalf("timed out after %s waiting until %s at %s; the page shows:\n%s", timeout, what, path, qhronostest.Tail(body, 3000))
	}
	p.audit()
}

func (p *page) text(sel string) string {
	p.t.Helper()
	var s string
	p.run(pageTimeout, "read "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

// fill replaces an input's value by typing, so the page's input handlers run.
func (p *page) fill(sel, value string) {
	p.t.Helper()
	var ignored any
	p.run(pageTimeout, "fill "+sel, chromedp.WaitVisible(sel, chromedp.ByQuery),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).value = ""`, sel), &ignored),
		chromedp.SendKeys(sel, value, chromedp.ByQuery))
}

func (p *page) click(sel string) {
	p.t.Helper()
	p.run(pageTimeout, "click "+sel, chromedp.WaitVisible(sel, chromedp.ByQuery), chromedp.Click(sel, chromedp.ByQuery))
}

// shot saves a screenshot of the page at width × 900 (full page unless
// viewportOnly) when screenshots were asked for.
func (p *page) shot(name string, width int64, viewportOnly bool) {
	p.t.Helper()
	if p.shots == "" {
		return
	}
	var buf []byte
	capture := chromedp.FullScreenshot(&buf, 100)
	if viewportOnly {
		capture = chromedp.CaptureScreenshot(&buf)
	}
	p.run(pageTimeout, "screenshot "+name, chromedp.EmulateViewport(width, 900), capture,
		chromedp.EmulateViewport(1280, 900))
	require.NoError(p.t, os.WriteFile(filepath.Join(p.shots, name+".png"), buf, 0o644))
}

func (p *page) signIn(token string) {
	p.t.Helper()
	p.open("/ui/login")
	p.fill("#token", token)
	p.click(`form[action="/ui/login"] button[type=submit]`)
	p.waitText("h1", "Overview", pageTimeout)
}

func TestConsole(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		consoleStories(t, srv, p)
	})
}

// onBothStores runs story in a browser of its own against a server on each
// store, embedded SQLite and PostgreSQL + Redis (started by postgres), in
// parallel; the SQLite run writes the screenshots when
// QHRONOS_CONSOLE_SCREENSHOTS names a folder.
func onBothStores(t *testing.T, postgres func(*testing.T) consoleServer, story func(*testing.T, consoleServer, *page)) {
	onStores(t, consoleSQLite, postgres, story)
}

// onStores is onBothStores with the SQLite server's start too.
func onStores(t *testing.T, sqlite, postgres func(*testing.T) consoleServer, story func(*testing.T, consoleServer, *page)) {
	backends := []struct {
		name  string
		start func(*testing.T) consoleServer
	}{{"sqlite", sqlite}, {"postgres", postgres}}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := browser(t)
			srv := b.start(t)
			p := &page{t: t, ctx: ctx, base: srv.url}
			if dir := os.Getenv("QHRONOS_CONSOLE_SCREENSHOTS"); dir != "" && b.name == "sqlite" {
				p.shots = dir
			}
			story(t, srv, p)
		})
	}
}

func consoleStories(t *testing.T, srv consoleServer, p *page) {
	ok := newReceiver(t)
	failing := newReceiver(t)
	failing.setBehaviour(answer(http.StatusInternalServerError))

	// An operator signs in with the master token; a wrong token is refused
	// next to the field.
	p.open("/ui/")
	p.waitFor("the sign-in form", `!!document.querySelector("#token")`, pageTimeout)
	p.shot("console-sign-in", 1280, false)
	p.fill("#token", "not-a-token")
	p.click(`form[action="/ui/login"] button[type=submit]`)
	p.waitText("#token-error", "does not accept this token", pageTimeout)
	p.signIn(srv.master)

	// They create a recurring event through the form and see its next 10
	// instants, and the API's validation error next to the rule field.
	p.open("/ui/events")
	p.waitText("main", "No events yet", pageTimeout)
	p.click(`a[href="/ui/events/new"]`)
	p.waitFor("the event form", `!!document.querySelector("#event-form")`, pageTimeout)
	p.fill("#f-name", "weekly report")
	p.fill("#f-tags", "reports")
	p.fill("#f-timezone", "Europe/Prage")
	p.fill("#f-start", "tomorrow at 9am")
	p.fill("#f-rule", "FREQ=SOMETIMES")
	// A misspelt zone and a bad rule: each error under its own field.
	p.waitFor("the zone's error under the zone and the rule's under the rule",
		`(function(){var z=document.querySelector('[data-error-for="timezone"]'), r=document.querySelector('[data-error-for="rule"]');
		  return !z.hidden && z.innerText.indexOf("Europe/Prage") >= 0 && z.previousElementSibling.id === "f-timezone" &&
		    !r.hidden && r.innerText.indexOf("SOMETIMES") >= 0 && r.innerText.indexOf("zone") < 0;})()`,
		pageTimeout)
	p.fill("#f-timezone", "Europe/Prague")
	p.waitFor("the rule's error next to the field, the zone's gone",
		`(function(){var e=document.querySelector('[data-error-for="rule"]');return !!e && !e.hidden && e.innerText.indexOf("SOMETIMES") >= 0 &&
		  document.querySelector('[data-error-for="timezone"]').hidden;})()`,
		pageTimeout)
	p.fill("#f-rule", "FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9;BYMINUTE=0")
	p.waitFor("10 previewed instants at 09:00 Prague time",
		`document.querySelectorAll("#preview-list li").length === 10 &&
		 Array.from(document.querySelectorAll("#preview-list li")).every(function(li){return li.getAttribute("data-local").indexOf("T09:00:00") > 0;}) &&
		 document.querySelector('[data-error-for="rule"]').hidden`, pageTimeout)
	p.fill("#f-target", ok.URL())
	p.shot("console-event-form", 1280, false)
	p.click(`#event-form button[type=submit]`)
	p.waitText("#rule-words", "Every week on Monday and Wednesday at 09:00", pageTimeout)
	p.waitFor("10 upcoming instants", `document.querySelectorAll("#upcoming li").length === 10`, pageTimeout)
	p.waitText(".notice", "Event created", pageTimeout)
	// and edit it: the form comes back filled in, the schedule unchanged.
	p.click(`a[href$="/edit"]`)
	p.waitFor("the edit form filled in", `document.querySelector("#f-rule").value === "FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9;BYMINUTE=0" &&
		document.querySelectorAll("#preview-list li").length === 10`, pageTimeout)
	p.fill("#f-description", "Monday and Wednesday digest")
	p.click(`#event-form button[type=submit]`)
	p.waitText(".notice", "Event saved", pageTimeout)
	p.waitText("main", "Monday and Wednesday digest", pageTimeout)
	p.waitText("#rule-words", "Every week on Monday and Wednesday at 09:00", pageTimeout)

	// They watch an occurrence fire and complete on Live.
	liveEvent := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "heartbeat",
		"start_time": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339), "webhook": ok.URL(),
		"tags": []string{"live"}})
	p.open("/ui/live?tags=live")
	p.waitFor("the live stream listening", `document.querySelector("#live-state").getAttribute("data-state") === "listening"`,
		pageTimeout)
	srv.api(t, srv.master, "POST", "/events/"+liveEvent["id"].(string)+"/trigger", map[string]any{})
	p.waitText("#live-rows", "heartbeat", fireTimeout)
	p.waitText("#live-rows .live-status", "completed", fireTimeout)
	p.shot("console-live", 1280, false)

	// A failing delivery shows under Failures; replayed against a receiver
	// that now answers 200, it completes.
	billing := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "nightly billing",
		"start_time": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339), "webhook": failing.URL(),
		"tags": []string{"billing"}, "retry": map[string]any{"max_attempts": 1}})
	billingID := billing["id"].(string)
	srv.api(t, srv.master, "POST", "/events/"+billingID+"/trigger", map[string]any{})
	p.reloadUntil("/ui/failures?window=1h", "the failed delivery is listed",
		`!!document.querySelector("#failures") && document.querySelector("#failures").innerText.indexOf("nightly billing") >= 0`,
		fireTimeout)
	p.waitText("#failures", "500", pageTimeout)
	p.shot("console-failures", 1280, false)
	p.click("#bulk-replay")
	p.waitText("#bulk-count", "This re-sends 1 occurrence", pageTimeout)
	p.click(`a[href^="/ui/failures?"]`)
	var occID string
	var found bool
	p.run(pageTimeout, "read the failed occurrence's id", chromedp.WaitVisible("#failures tr[data-occurrence]", chromedp.ByQuery),
		chromedp.AttributeValue("#failures tr[data-occurrence]", "data-occurrence", &occID, &found, chromedp.ByQuery))
	require.True(t, found)
	failing.setBehaviour(answer(http.StatusOK))
	p.click(`#failures tr[data-occurrence] button[type=submit]`)
	p.waitText(".notice", "Replay queued", pageTimeout)
	p.reloadUntil("/ui/occurrences/"+occID, "the replayed occurrence completed",
		`document.querySelector("#occurrence-status").innerText === "completed"`, fireTimeout)
	p.waitText("#attempts", "manual", pageTimeout)
	p.waitText("#replay-hint", "same delivery id (webhook-id) as before", pageTimeout)
	p.shot("console-occurrence", 1280, false)
	p.open("/ui/events/" + billingID)
	p.waitText("#history", "completed", pageTimeout)
	p.shot("console-event", 1280, false)

	// They skip tomorrow's reminder with a reason, see it planned as
	// skipped, and undo it.
	reminder := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "standup reminder",
		"start_time": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "rrule": "FREQ=DAILY",
		"webhook": ok.URL(), "tags": []string{"team"}})
	reminderID := reminder["id"].(string)
	rows := srv.api(t, srv.master, "GET", "/occurrences?event_id="+reminderID, nil)["data"].([]any)
	require.Len(t, rows, 1)
	reminderOcc := rows[0].(map[string]any)["id"].(string)
	p.open("/ui/occurrences/" + reminderOcc)
	p.fill("#skip-reason", "team offsite")
	p.click("#skip")
	p.waitText(".notice", "Skipped", pageTimeout)
	p.waitText("#occurrence-status", "skipped", pageTimeout)
	p.waitText("#reason", "manual", pageTimeout)
	p.waitText("main", "team offsite", pageTimeout)
	p.open("/ui/events/" + reminderID)
	p.waitFor("the upcoming instant shown skipped", `!!document.querySelector("#upcoming li.skipped[data-reason=manual]")`,
		pageTimeout)
	p.open("/ui/occurrences/" + reminderOcc)
	p.click("#unskip")
	p.waitText(".notice", "Unskipped", pageTimeout)
	p.waitText("#occurrence-status", "pending", pageTimeout)
	// Then they move it half an hour later from the same page, the picker in
	// the event's zone, and the page says where it was planned.
	planned, err := time.Parse(time.RFC3339Nano, rows[0].(map[string]any)["scheduled_at"].(string))
	require.NoError(t, err)
	zone, err := time.LoadLocation(reminder["timezone"].(string))
	require.NoError(t, err)
	p.setPicker("#move-to", planned.Add(30*time.Minute).In(zone))
	p.fill("#move-reason", "room booked")
	p.click("#move")
	p.waitText(".notice", "Moved", pageTimeout)
	p.waitFor("where it was planned", `!!document.querySelector("#original")`, pageTimeout)
	moved, err := time.Parse(time.RFC3339Nano, srv.api(t, srv.master, "GET", "/occurrences/"+reminderOcc, nil)["scheduled_at"].(string))
	require.NoError(t, err)
	require.True(t, moved.Equal(planned.Add(30*time.Minute)), "moved to %s, planned %s", moved, planned)

	p.open("/ui/")
	p.waitFor("the charts drawn", `document.querySelectorAll(".chart canvas").length === 2`, pageTimeout)
	p.shot("console-overview", 1280, false)
	p.shot("console-overview-phone", 390, false)
	// A list across events is in the browser's zone, said once, 24-hour
	// with the offset, the UTC instant on hover.
	p.run(pageTimeout, "set the browser's zone", emulation.SetTimezoneOverride("America/New_York"))
	p.open("/ui/events")
	p.waitText("#events-table", "nightly billing", pageTimeout)
	p.waitText("#zone-note", "Times in America/New_York, your browser's zone", pageTimeout)
	p.waitFor("the next runs in New York time", `(function(){
		var ts = Array.from(document.querySelectorAll("#events-table time"));
		return ts.length > 0 && ts.every(function(e){
			return e.hasAttribute("data-local") && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d -0[45]:00$/.test(e.textContent) && / UTC$/.test(e.title);
		});
	})()`, pageTimeout)
	p.shot("console-events", 1280, false)
	p.shot("console-events-phone", 390, false)
	p.open("/ui/api")
	p.waitText("main", "/events/{id}/trigger", pageTimeout)
	p.shot("console-api-reference", 1280, true)

	// They mint a read token scoped to "reports"; signed in with it, the
	// console shows the reports event and nothing of "billing".
	p.open("/ui/tokens")
	p.waitFor("the mint form", `!!document.querySelector("#mint-form")`, pageTimeout)
	p.shot("console-tokens", 1280, false)
	p.fill("#t-sub", "reports-reader")
	p.fill("#t-scope", "reports")
	p.click(`#mint-form button[type=submit]`)
	p.waitFor("the minted token", `!!document.querySelector("#minted-token")`, pageTimeout)
	scoped := strings.TrimSpace(p.text("#minted-token"))
	require.True(t, strings.HasPrefix(scoped, "ey"), "a JWT: %q", scoped)
	p.click(".signout button")
	p.waitFor("the sign-in form", `!!document.querySelector("#token")`, pageTimeout)
	p.signIn(scoped)
	p.open("/ui/events")
	p.waitText("#events-table", "weekly report", pageTimeout)
	require.NotContains(t, p.text("#events-table"), "nightly billing", "a scoped token sees only its tags")
	require.NotContains(t, p.text("#events-table"), "heartbeat")
	p.open("/ui/events/" + billingID)
	p.waitText("main", "Not found, or not visible to your token", pageTimeout)
	p.open("/ui/failures?window=all")
	p.waitText("#no-failures", "No failures match", pageTimeout)
	p.open("/ui/tokens")
	p.waitText("#tokens-forbidden", "admin access", pageTimeout)

	// The token is revoked while its user watches Live: the console signs
	// them out, and the next page asks to sign in again.
	p.open("/ui/live")
	p.waitFor("the live stream listening", `document.querySelector("#live-state").getAttribute("data-state") === "listening"`,
		pageTimeout)
	var tokens []map[string]any
	srv.apiList(t, "/tokens", &tokens)
	revoked := false
	for _, tok := range tokens {
		if tok["sub"] == "reports-reader" {
			srv.api(t, srv.master, "DELETE", "/tokens/"+tok["id"].(string), nil)
			revoked = true
		}
	}
	require.True(t, revoked, "the minted token is listed: %v", tokens)
	p.waitFor("the session-ended notice", `!!document.querySelector("#session-ended")`, fireTimeout)
	p.open("/ui/events")
	p.waitFor("the sign-in form", `!!document.querySelector("#token")`, pageTimeout)
}

// apiList reads a listing that answers a JSON array, with the master token.
func (s consoleServer) apiList(t *testing.T, path string, out any) {
	t.Helper()
	req, err := http.NewRequest("GET", s.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.master)
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, json.NewDecoder(res.Body).Decode(out))
}
