package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

func TestAnEndpointInUseKeepsItsKind(t *testing.T) {
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			testAnEndpointInUseKeepsItsKind(t, b.Open)
		})
	}
}

// Events and subscriptions are checked against their endpoint's kind (HTTP,
// or one broker's) when they name it; a URL of another kind would fail all
// their deliveries, so the endpoint's PATCH refuses it while any names it,
// and changes nothing.
func testAnEndpointInUseKeepsItsKind(t *testing.T, open func(testing.TB) *repository.Store) {
	e := newEnv(t, open)
	hooks := e.createEndpoint(e.master, endpointBody())["id"].(string)
	event := eventBody()
	delete(event, "webhook")
	event["action"] = map[string]any{"type": "webhook", "params": map[string]any{"endpoint_id": hooks}}
	res := e.do("POST", "/events", e.master, event)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	require.Equal(t, http.StatusCreated, e.do("POST", "/topics", e.master, map[string]any{"name": "digest"}).Status)
	res = e.do("POST", "/subscriptions", e.master, map[string]any{"topic": "digest", "endpoint_id": hooks})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)

	res = e.do("PATCH", "/endpoints/"+hooks, e.master, map[string]any{"url": "nats://127.0.0.1:4222", "name": "renamed"})
	refused(t, res, http.StatusConflict, "url", "endpoint is used by 1 event and 1 subscription, which deliver to an "+
		"HTTP URL: a nats broker's URL would fail every delivery")
	res = e.do("GET", "/endpoints/"+hooks, e.master, nil)
	require.Equal(t, "http://127.0.0.1:9999/hooks", res.object(t)["url"], "nothing is half written")
	require.Equal(t, "billing", res.object(t)["name"])
	res = e.do("PATCH", "/endpoints/"+hooks, e.master, map[string]any{"url": "https://127.0.0.1:9443/v2/hooks"})
	require.Equal(t, http.StatusOK, res.Status, "another HTTP URL serves the same users: %s", res.Body)

	queue := e.createEndpoint(e.master, map[string]any{"name": "queue", "url": "nats://127.0.0.1:4222"})["id"].(string)
	// (this server runs no broker actions: the event is stored as the
	// events service stores one)
	publish := e.eventNaming(queue, "")
	publish.Action = model.Action{Type: "nats", Params: json.RawMessage(`{"endpoint_id":"` + queue + `","subject":"billing.run"}`)}
	require.NoError(t, e.store.UpdateEvent(context.Background(), publish, publish.Version))
	res = e.do("PATCH", "/endpoints/"+queue, e.master, map[string]any{"url": "kafka://127.0.0.1:9092"})
	refused(t, res, http.StatusConflict, "url", "endpoint is used by 1 event, which deliver to a nats broker's URL: "+
		"a kafka broker's URL would fail every delivery")
	res = e.do("PATCH", "/endpoints/"+queue, e.master, map[string]any{"url": "http://127.0.0.1:9999/hooks"})
	refused(t, res, http.StatusConflict, "url", "an HTTP URL would fail every delivery")
	res = e.do("PATCH", "/endpoints/"+queue, e.master, map[string]any{"url": "nats://127.0.0.2:4222"})
	require.Equal(t, http.StatusOK, res.Status, "another server of the same broker: %s", res.Body)

	// An event whose endpoint changed kind before this check existed (an
	// older server) can still be edited, paused or deleted; only naming
	// the endpoint again is refused.
	legacy := e.createEndpoint(e.master, endpointBody())["id"].(string)
	event["action"] = map[string]any{"type": "webhook", "params": map[string]any{"endpoint_id": legacy}}
	res = e.do("POST", "/events", e.master, event)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	stranded := res.object(t)["id"].(string)
	ep, err := e.store.GetEndpoint(context.Background(), legacy)
	require.NoError(t, err)
	ep.URL = "nats://127.0.0.1:4222"
	require.NoError(t, e.store.UpdateEndpoint(context.Background(), &ep, ep.Version, false))
	res = e.do("PUT", "/events/"+stranded, e.master, map[string]any{"name": "renamed"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	res = e.do("PUT", "/events/"+stranded, e.master, map[string]any{"action": event["action"]})
	refused(t, res, http.StatusBadRequest, "action.params.endpoint_id", "is a nats broker endpoint")

	spare := e.createEndpoint(e.master, map[string]any{"name": "spare", "url": "nats://127.0.0.1:4222"})["id"].(string)
	res = e.do("PATCH", "/endpoints/"+spare, e.master, map[string]any{"url": "http://127.0.0.1:9999/hooks"})
	require.Equal(t, http.StatusOK, res.Status, "nothing names it: %s", res.Body)
	require.Equal(t, "http://127.0.0.1:9999/hooks", res.object(t)["url"])
}
