package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// The In flight page: work across events that is due and not finished, as
// an operator with a token scoped to one team sees it, with its filters.
func TestConsoleInFlight(t *testing.T) {
	onBothStores(t, consolePostgresPatient, func(t *testing.T, srv consoleServer, p *page) {
		inflightStory(t, srv, p)
	})
}

// consolePostgresPatient is consolePostgres with the embedded default's
// attempt timeout and backoffs: a held delivery stays under way for the
// story, and a retry waits the hour it asks for.
func consolePostgresPatient(t *testing.T) consoleServer {
	d := newDeployment(t)
	d.withSharedRedis()
	p := d.start("console-postgres", "QHRONOS_ACTIONS_MAX_ATTEMPT_TIMEOUT", "1m",
		"QHRONOS_RETRY_MAX_BACKOFF", "24h")
	return consoleServer{url: p.url, master: d.token}
}

// rowOf is a script finding the In flight row of an event by its name.
func rowOf(name string) string {
	return fmt.Sprintf(`Array.from(document.querySelectorAll("#inflight tbody tr")).filter(function(tr){
		return tr.querySelector("td").innerText.indexOf(%q) === 0;})[0]`, name)
}

func inflightStory(t *testing.T, srv consoleServer, p *page) {
	failing := newReceiver(t)
	failing.setBehaviour(answer(http.StatusServiceUnavailable))
	stuck := newReceiver(t)
	held := newReleaser(t)
	stuck.setBehaviour(hang(held.ch))

	later := "in 2 hours"
	ep := srv.api(t, srv.master, "POST", "/endpoints", map[string]any{"name": "warehouse", "url": stuck.URL(),
		"tags": []string{"ops"}})
	retried := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "retry report", "start_time": later,
		"rrule": "FREQ=DAILY", "webhook": failing.URL(), "tags": []string{"ops"},
		"retry": map[string]any{"max_attempts": 5, "initial_backoff": "1h"}})
	foreign := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "sales retry", "start_time": later,
		"rrule": "FREQ=DAILY", "webhook": failing.URL(), "tags": []string{"sales"},
		"retry": map[string]any{"max_attempts": 5, "initial_backoff": "1h"}})
	export := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "stuck export", "start_time": later,
		"rrule": "FREQ=DAILY", "tags": []string{"ops"}, "timeout": "1m",
		"action": map[string]any{"type": "webhook", "params": map[string]any{"endpoint_id": ep["id"]}}})
	tok := srv.api(t, srv.master, "POST", "/tokens", map[string]any{"sub": "ops-viewer", "access": "read",
		"scope": []string{"ops"}, "expires_at": "in 1 day"})
	p.signIn(tok["token"].(string))

	// Two deliveries fail and wait for their next attempt in an hour.
	for _, ev := range []map[string]any{retried, foreign} {
		srv.api(t, srv.master, "POST", "/events/"+ev["id"].(string)+"/trigger", nil)
	}
	failing.waitReceived(t, 2, fireTimeout)
	// One is being sent: the receiver holds it.
	sent := srv.api(t, srv.master, "POST", "/events/"+export["id"].(string)+"/trigger", nil)
	stuck.waitReceived(t, 1, fireTimeout)

	// The page lists both of the team's: the retry with its next attempt,
	// the delivery under way as due; not the other team's.
	p.reloadUntil("/ui/inflight", "the retry and the delivery under way", fmt.Sprintf(`(function(){
		var r = %s, s = %s;
		return !!r && !!s && r.getAttribute("data-status") === "retrying" && r.querySelector(".state").innerText.indexOf("next attempt") >= 0 &&
			r.querySelector(".err-text").innerText === "receiver answered 503" &&
			!!r.querySelector(".state time") && s.getAttribute("data-status") === "pending" && s.querySelector(".state").innerText.indexOf("due") === 0;
	})()`, rowOf("retry report"), rowOf("stuck export")), pageTimeout)
	p.waitFor("the other team's retry not shown, the count, the nav", `document.querySelector("#inflight").innerText.indexOf("sales retry") < 0 &&
		document.querySelector("#inflight-total").innerText === "2 in flight" &&
		document.querySelector('nav a[href="/ui/inflight"]').getAttribute("aria-current") === "page"`, pageTimeout)
	p.waitText("#inflight-hint", "a delivery under way stays pending until its outcome is recorded", pageTimeout)
	p.shot("console-inflight", 1280, false)

	// Filters: state, endpoint (picked from the team's endpoints), and the
	// event's name in any case.
	only := func(name string) string {
		return fmt.Sprintf(`document.querySelectorAll("#inflight tbody tr").length === 1 && !!%s`, rowOf(name))
	}
	p.open("/ui/inflight?state=retrying")
	p.waitFor("only the retry", only("retry report"), pageTimeout)
	p.open("/ui/inflight")
	p.settle()
	p.selectValue("#if-endpoint", ep["id"].(string))
	p.click(`form[action="/ui/inflight"] button[type=submit]`)
	p.waitFor("only the export, delivering to the endpoint", only("stuck export"), pageTimeout)
	p.open("/ui/inflight?q=EXPORT")
	p.waitFor("only the export, found by name", only("stuck export"), pageTimeout)
	p.open("/ui/inflight?tags=sales")
	p.waitText("#nothing-in-flight", "Nothing in flight matches this filter", pageTimeout)

	// Bad filters: the error under the field.
	p.open("/ui/inflight?state=sleeping")
	p.waitText("#if-state-error", "choose due, dispatching, retrying, awaiting ack or running", pageTimeout)
	p.open("/ui/inflight?endpoint=not-an-id")
	p.waitFor("the endpoint's error under its field", `(function(){var e=document.querySelector("#if-endpoint-error");
		return !!e && e.innerText.length > 0 && !document.querySelector("#inflight");})()`, pageTimeout)

	// Released, the delivery completes and leaves the page.
	held.release()
	p.reloadUntil("/ui/inflight", "the finished delivery gone", fmt.Sprintf(`!%s && !!%s`, rowOf("stuck export"),
		rowOf("retry report")), pageTimeout)
	require.Equal(t, 1, stuck.received(), "the held delivery was sent once")

	// Its page shows the request the attempt sent, with the delivery id
	// the receiver got.
	p.open("/ui/occurrences/" + sent["id"].(string))
	p.waitText("#attempts", "completed", pageTimeout)
	p.waitText("#request-1 .request-line", "POST "+stuck.URL(), pageTimeout)
	got := stuck.counts()
	require.Len(t, got, 1)
	for id := range got {
		p.waitText("#request-1 .request-headers", "Webhook-Id\t"+id, pageTimeout) // what the receiver got
	}
}
