package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A skip added in the console while an event is paused until a moment, on
// an instant after the pause, shows at once as what will happen (skipped,
// with its reason) on the occurrence's page, and the Events list shows the
// next run after the pause.
func TestConsoleSkipWhilePaused(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		p.signIn(srv.master)
		pausedSkipStory(t, srv, p)
	})
}

func pausedSkipStory(t *testing.T, srv consoleServer, p *page) {
	ok := newReceiver(t)
	start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	ev := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "hourly sync", "start_time": start.Format(time.RFC3339),
		"rrule": "FREQ=HOURLY", "webhook": ok.URL(), "tags": []string{"sync"}})
	id := ev["id"].(string)
	until := start.Add(90 * time.Minute)
	srv.api(t, srv.master, "POST", "/events/"+id+"/pause", map[string]any{"until": until.Format(time.RFC3339), "reason": "migration"})
	third := start.Add(3 * time.Hour) // after the pause
	key := third.Format("2006-01-02T15:04:05.999999Z07:00")

	// The list shows the next run after the pause, not a blank.
	p.open("/ui/events?q=hourly")
	p.waitFor("the next run after the pause", fmt.Sprintf(`(function(){var t=document.querySelector("#events-table tbody tr time");
		return !!t && new Date(t.getAttribute("datetime")).getTime() === %d;})()`, start.Add(2*time.Hour).UnixMilli()), pageTimeout)

	// Skip an instant after the pause from the event page.
	p.open("/ui/events/" + id)
	p.settle()
	p.waitFor("the instant in the picker", fmt.Sprintf(`!!document.querySelector('#x-at option[value="%s"]')`, key), pageTimeout)
	p.selectValue("#x-at", key)
	p.fill("#x-reason", "audit window")
	p.click("#exception-submit")
	p.waitText(".notice", "Skipped", pageTimeout)

	var occs []map[string]any
	var row map[string]any
	srv.apiList(t, "/events/"+id+"/occurrences?order=scheduled_at", &occs)
	for _, o := range occs {
		if at, _ := time.Parse(time.RFC3339Nano, o["scheduled_at"].(string)); at.Equal(third) {
			row = o
		}
	}
	require.NotNil(t, row, "a row at %s", third)
	require.Equal(t, "skipped", row["status"], "the API (and so the CLI) says what will happen: %v", row)
	p.open("/ui/occurrences/" + row["id"].(string))
	p.waitText("#occurrence-status", "skipped", pageTimeout)
	p.waitText("#reason", "manual", pageTimeout)
	p.waitText("main dl", "audit window", pageTimeout)
}
