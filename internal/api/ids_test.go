package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Both stores answer alike to ids in another case and to ids that are not
// uuids: an upper-case uuid names the same resource (PostgreSQL's uuid type
// found it, SQLite's text did not), a filter that is not a uuid is a 400
// naming it (PostgreSQL answered 404, SQLite an empty list).
func TestIDsAnswerTheSameOnBothStores(t *testing.T) {
	t.Parallel()
	type answer struct {
		status int
		field  string
		n      int // items listed, for 200 lists
	}
	got := map[string][]answer{}
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b.Open)
			ep := e.createEndpoint(e.master, endpointBody())["id"].(string)
			body := eventBody()
			body["webhook"] = nil
			delete(body, "webhook")
			body["action"] = map[string]any{"type": "webhook", "params": map[string]any{"endpoint_id": strings.ToUpper(ep)}}
			ev := e.createEvent(e.master, body)
			require.Equal(t, ep, ev["endpoint_id"], "an upper-case endpoint_id is stored as the endpoint's own id")
			id := ev["id"].(string)
			up := strings.ToUpper(id)
			for _, q := range []struct {
				method, path string
				body         any
				want         int
				field        string
			}{
				{"GET", "/events/" + up, nil, http.StatusOK, ""},
				{"GET", "/endpoints/" + strings.ToUpper(ep), nil, http.StatusOK, ""},
				{"GET", "/events?endpoint_id=" + strings.ToUpper(ep), nil, http.StatusOK, ""},
				{"GET", "/occurrences?event_id=" + up, nil, http.StatusOK, ""},
				{"GET", "/events/" + up + "/occurrences", nil, http.StatusOK, ""},
				{"POST", "/occurrences/retry", map[string]any{"event_id": up}, http.StatusOK, ""},
				{"GET", "/events/junk", nil, http.StatusNotFound, ""},
				{"GET", "/events?endpoint_id=junk", nil, http.StatusBadRequest, "endpoint_id"},
				{"GET", "/occurrences?event_id=junk", nil, http.StatusBadRequest, "event_id"},
				{"GET", "/occurrences?archived=true&event_id=junk", nil, http.StatusBadRequest, "event_id"},
				{"POST", "/occurrences/retry", map[string]any{"event_id": "junk"}, http.StatusBadRequest, "event_id"},
				// Bulk replay: the documented maximum holds, and a nameless member is named as the body.
				{"POST", "/occurrences/retry", map[string]any{"limit": 10001}, http.StatusBadRequest, "limit"},
				{"POST", "/occurrences/retry", map[string]any{"limit": 10000}, http.StatusOK, ""},
				{"POST", "/occurrences/retry", `{"": 1}`, http.StatusBadRequest, "body"},
				{"POST", "/events", `{"": 1}`, http.StatusBadRequest, "body"},
			} {
				res := e.do(q.method, q.path, e.master, q.body)
				require.Equal(t, q.want, res.Status, "%s %s %v: %s", q.method, q.path, q.body, res.Body)
				a := answer{status: res.Status}
				if q.want == http.StatusBadRequest {
					obj := res.object(t)
					require.Equal(t, q.field, obj["field"], "%s %s %v: %s", q.method, q.path, q.body, res.Body)
					require.NotContains(t, obj["error"], "unknown: )", "the error names something")
					a.field = q.field
				}
				if q.method == "GET" && q.want == http.StatusOK && strings.Contains(q.path, "?") {
					var list []any
					if strings.HasPrefix(q.path, "/occurrences") {
						var env struct{ Data []any }
						res.json(t, &env)
						list = env.Data
					} else {
						res.json(t, &list)
					}
					require.Len(t, list, 1, "%s finds the one row", q.path)
					a.n = len(list)
				}
				got[b.Name] = append(got[b.Name], a)
			}
		})
	}
	if len(got) == 2 {
		require.Equal(t, got["sqlite"], got["postgres"], "both stores answer the same")
	}
}
