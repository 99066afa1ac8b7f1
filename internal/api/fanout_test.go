package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

func TestTopicsAndSubscriptions(t *testing.T) {
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			testTopicsAndSubscriptions(t, b.Open)
		})
	}
}

// refused asserts a 4xx naming field.
func refused(t *testing.T, res response, status int, field, says string) {
	t.Helper()
	require.Equal(t, status, res.Status, "%s", res.Body)
	var eb errorBody
	res.json(t, &eb)
	require.Equal(t, field, eb.Field, "%s", res.Body)
	require.Contains(t, eb.Error, says)
}

// An operator defines the catalogue; a team subscribes its own endpoint to
// it with a filter, and sees and changes only its own subscriptions.
func testTopicsAndSubscriptions(t *testing.T, open func(testing.TB) *repository.Store) {
	e := newEnv(t, open)
	schema := map[string]any{"type": "object", "required": []string{"region"},
		"properties": map[string]any{"region": map[string]any{"enum": []string{"eu", "us"}}}}
	res := e.do("POST", "/topics", e.master, map[string]any{"name": "digest.daily", "description": "the morning digest",
		"schema": schema})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	require.Equal(t, "/topics/digest.daily", res.Header.Get("Location"))
	require.Equal(t, "object", res.object(t)["schema"].(map[string]any)["type"])
	refused(t, e.do("POST", "/topics", e.master, map[string]any{"name": "digest.daily"}), http.StatusConflict, "name", "exists")
	refused(t, e.do("POST", "/topics", e.master, map[string]any{"name": "Digest Daily"}), http.StatusBadRequest, "name", "a-z 0-9")
	refused(t, e.do("POST", "/topics", e.master, map[string]any{"name": "x", "schema": map[string]any{"type": "objekt"}}),
		http.StatusBadRequest, "schema", "not a valid JSON Schema")
	refused(t, e.do("POST", "/topics", e.master, map[string]any{"name": "x", "schema": map[string]any{"$ref": "http://169.254.169.254/"}}),
		http.StatusBadRequest, "schema", "must hold everything itself")

	teamA, _ := e.mintToken("write", []string{"team-a"})
	reader, _ := e.mintToken("read", []string{"team-b"})
	require.Equal(t, http.StatusForbidden, e.do("POST", "/topics", teamA, map[string]any{"name": "mine"}).Status,
		"the catalogue is the operator's")
	res = e.do("GET", "/topics", reader, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Contains(t, string(res.Body), `"name":"digest.daily"`, "every token reads the catalogue")

	res = e.do("POST", "/endpoints", teamA, endpointBody("team-a"))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	mine, _ := res.object(t)["id"].(string)
	res = e.do("POST", "/endpoints", e.master, endpointBody("team-b"))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	theirs, _ := res.object(t)["id"].(string)

	sub := func(over map[string]any) map[string]any {
		b := map[string]any{"topic": "digest.*", "endpoint_id": mine, "filter": `metadata.region == "eu"`,
			"tags": []string{"team-a"}}
		for k, v := range over {
			b[k] = v
		}
		return b
	}
	refused(t, e.do("POST", "/subscriptions", teamA, sub(map[string]any{"topic": "digest.weekly"})),
		http.StatusBadRequest, "topic", `no topic named "digest.weekly"`)
	refused(t, e.do("POST", "/subscriptions", teamA, sub(map[string]any{"topic": "digest.w*"})),
		http.StatusBadRequest, "topic", "as a whole segment")
	refused(t, e.do("POST", "/subscriptions", teamA, sub(map[string]any{"filter": `metadata.region ==`})),
		http.StatusBadRequest, "filter", "does not compile")
	refused(t, e.do("POST", "/subscriptions", teamA, sub(map[string]any{"filter": `metadata.items.all(a, metadata.items.all(b, a == b))`})),
		http.StatusBadRequest, "filter", "more than the limit")
	refused(t, e.do("POST", "/subscriptions", teamA, sub(map[string]any{"endpoint_id": theirs})),
		http.StatusBadRequest, "endpoint_id", "unknown endpoint")
	refused(t, e.do("POST", "/subscriptions", teamA, sub(map[string]any{"tags": []string{"team-b"}})),
		http.StatusForbidden, "tags", "outside")
	res = e.do("POST", "/endpoints", teamA, map[string]any{"name": "queue", "url": "nats://127.0.0.1:4222/digests",
		"tags": []string{"team-a"}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	broker, _ := res.object(t)["id"].(string)
	refused(t, e.do("POST", "/subscriptions", teamA, sub(map[string]any{"endpoint_id": broker})),
		http.StatusBadRequest, "endpoint_id", "a message broker endpoint (nats)")
	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/endpoints/"+broker, teamA, nil).Status)
	refused(t, e.do("POST", "/subscriptions", teamA, sub(map[string]any{"colour": "red"})),
		http.StatusBadRequest, "colour", "")

	res = e.do("POST", "/subscriptions", teamA, sub(nil))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	created := res.object(t)
	id, _ := created["id"].(string)
	etag := res.Header.Get("ETag")
	require.Equal(t, `metadata.region == "eu"`, created["filter"])
	require.Equal(t, false, created["paused"])
	res = e.do("POST", "/subscriptions", e.master, map[string]any{"topic": "digest.daily", "endpoint_id": theirs,
		"tags": []string{"team-b"}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	exact, _ := res.object(t)["id"].(string)

	res = e.do("GET", "/subscriptions", teamA, nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Contains(t, string(res.Body), id)
	require.NotContains(t, string(res.Body), exact, "team-a sees its own subscriptions only")
	require.Equal(t, http.StatusNotFound, e.do("GET", "/subscriptions/"+exact, teamA, nil).Status)
	res = e.do("GET", "/subscriptions?topic=digest.daily&paused=false", e.master, nil)
	require.Contains(t, string(res.Body), exact)
	require.NotContains(t, string(res.Body), id, "the pattern as written")
	refused(t, e.do("GET", "/subscriptions?paused=maybe", e.master, nil), http.StatusBadRequest, "paused", "true or false")

	res = e.do("PATCH", "/subscriptions/"+id, teamA, map[string]any{"paused": true, "filter": nil}, "If-Match", etag)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Nil(t, res.object(t)["filter"], "null clears the filter: every firing")
	require.Equal(t, true, res.object(t)["paused"])
	require.Equal(t, http.StatusPreconditionFailed,
		e.do("PATCH", "/subscriptions/"+id, teamA, map[string]any{"paused": false}, "If-Match", etag).Status)

	// What still names a topic or an endpoint keeps it.
	res = e.do("DELETE", "/topics/digest.daily", e.master, nil)
	require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
	require.Contains(t, string(res.Body), "1 subscription names it")
	res = e.do("DELETE", "/endpoints/"+mine, teamA, nil)
	require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
	require.Contains(t, string(res.Body), "1 subscription")
	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/subscriptions/"+exact, e.master, nil).Status)
	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/topics/digest.daily", e.master, nil).Status)
	require.Equal(t, http.StatusOK, e.do("GET", "/subscriptions/"+id, teamA, nil).Status,
		"a pattern outlives the topics it named")
	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/subscriptions/"+id, teamA, nil).Status)
	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/endpoints/"+mine, teamA, nil).Status)
	require.True(t, strings.Contains(string(e.do("GET", "/topics", e.master, nil).Body), `"data":[]`))
}
