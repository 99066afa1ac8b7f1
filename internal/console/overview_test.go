package console

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// The overview names the destinations whose attempts stopped ending, with
// what they hold, when /status names them (an operator's token), and says
// how many there are when it only counts them.
func TestOverviewNamesStuckDestinations(t *testing.T) {
	t.Parallel()
	const dispatcher = `"dispatcher":{"runs":3,"healthy":true,"workers":64,"workers_busy":33,"scope_share":32,
"destination_share":16,"largest_scope_workers":32,"scopes_at_share":1,"oldest_attempt_ms":12500,"stuck_destinations":1`
	for _, tc := range []struct {
		name, status string
		want, not    []string
	}{
		{"operator", `{"status":"ok","version":"test","instance_id":"i1","backends":{},"scheduler":{` +
			dispatcher + `,"destinations":[{"destination":"10.0.0.7:5672","workers":16,"oldest_attempt_ms":12500,"overdue":2,"stuck":true},
{"destination":"hooks.example.com:443","workers":1,"oldest_attempt_ms":20,"overdue":0,"stuck":false}]}}}`,
			[]string{`id="stuck-destinations">1<`, "33 of 64 workers busy", "oldest attempt 12.5 s", "1 tenant(s) at their share",
				`id="stuck"`, "10.0.0.7:5672"},
			[]string{"hooks.example.com"}},
		{"tenant", `{"status":"ok","version":"test","instance_id":"i1","backends":{},"scheduler":{` +
			dispatcher + `}}}`,
			[]string{`id="stuck-destinations">1<`, "33 of 64 workers busy"},
			[]string{`id="stuck"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newTestConsole(t)
			c.api.answers["GET /status"] = jsonAnswer(200, tc.status)
			session, _ := c.signIn()
			res := c.get(session, "/ui/")
			page := body(t, res)
			require.Equal(t, http.StatusOK, res.StatusCode, page)
			for _, want := range tc.want {
				require.Contains(t, page, want)
			}
			for _, not := range tc.not {
				require.NotContains(t, page, not)
			}
		})
	}
}
