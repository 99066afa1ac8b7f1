package api

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// GET /occurrences narrowed to the events of one endpoint, or to events
// found by name or key, as the console's In flight page and `qhronos
// occurrences list --endpoint/--search` use it; scope still applies.
func TestOccurrencesByEndpointAndEventSearch(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			ep := e.createEndpoint(e.master, endpointBody("team-a"))
			viaEndpoint := eventBody("team-a")
			delete(viaEndpoint, "webhook")
			viaEndpoint["name"] = "Nightly Export"
			viaEndpoint["action"] = map[string]any{"type": "webhook", "params": map[string]any{"endpoint_id": ep["id"]}}
			exportID := e.createEvent(e.master, viaEndpoint)["id"].(string)
			plain := eventBody("team-a")
			plain["name"] = "hourly ping"
			pingID := e.createEvent(e.master, plain)["id"].(string)
			res := e.do("PUT", "/events/by-key/invoice-42", e.master, eventBody("team-b"))
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			keyedID := res.object(t)["id"].(string)

			events := func(token string, q url.Values) []string {
				t.Helper()
				res := e.do("GET", "/occurrences?"+q.Encode(), token, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				var page struct {
					Data []struct {
						EventID string `json:"event_id"`
					} `json:"data"`
				}
				res.json(t, &page)
				var out []string
				for _, o := range page.Data {
					out = append(out, o.EventID)
				}
				return out
			}
			require.Equal(t, []string{exportID}, events(e.master, url.Values{"endpoint_id": {ep["id"].(string)}}))
			require.Equal(t, []string{exportID}, events(e.master, url.Values{"q": {"nightly"}}), "name contains, any case")
			require.Equal(t, []string{pingID}, events(e.master, url.Values{"q": {"PING"}}))
			require.Equal(t, []string{keyedID}, events(e.master, url.Values{"q": {"invoice-42"}}), "the key")
			require.Empty(t, events(e.master, url.Values{"q": {"invoice"}}), "a key matches whole")
			require.Empty(t, events(e.master, url.Values{"q": {"100%"}}), "LIKE wildcards are literal")
			teamB := e.mint("read", []string{"team-b"})
			require.Empty(t, events(teamB, url.Values{"q": {"nightly"}}), "scope still applies")
			require.Equal(t, []string{keyedID}, events(teamB, url.Values{"q": {"invoice-42"}}))

			for _, c := range []struct{ query, field string }{
				{"endpoint_id=nope", "endpoint_id"},
				{"endpoint_id=" + ep["id"].(string) + "&archived=true", "endpoint_id"},
				{"q=x&archived=true", "q"},
			} {
				res := e.do("GET", "/occurrences?"+c.query, e.master, nil)
				require.Equal(t, http.StatusBadRequest, res.Status, "%s: %s", c.query, res.Body)
				require.Equal(t, c.field, res.object(t)["field"], "%s: %s", c.query, res.Body)
			}
		})
	}
}
