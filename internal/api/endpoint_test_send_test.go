package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/receiver"
)

// TestEndpointTestSend sends test deliveries to a real loopback receiver:
// signed with the endpoint's secret and carrying its headers, reported as
// the receiver answered, and leaving the attempt log and health alone.
func TestEndpointTestSend(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			type got struct {
				header http.Header
				body   []byte
			}
			received := make(chan got, 4)
			status := make(chan int, 4)
			rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				received <- got{header: r.Header.Clone(), body: body}
				w.WriteHeader(<-status)
				_, _ = io.WriteString(w, "receiver says hi")
			}))
			t.Cleanup(rcv.Close)

			body := endpointBody("team-a")
			body["url"] = rcv.URL + "/hooks"
			body["headers"] = map[string]string{"X-Team": "billing"}
			ep := e.createEndpoint(e.master, body)
			id, secret := ep["id"].(string), ep["secret"].(string)

			status <- http.StatusOK
			res := e.do("POST", "/endpoints/"+id+"/test", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			out := res.object(t)
			require.Equal(t, true, out["delivered"])
			require.Equal(t, float64(200), out["status_code"])
			require.Nil(t, out["error"])
			require.Equal(t, "receiver says hi", out["response_excerpt"])
			g := <-received
			require.NoError(t, receiver.NewVerifier([]string{secret}).Verify(g.header, g.body))
			require.Equal(t, "billing", g.header.Get("X-Team"))
			d, err := receiver.ParseDelivery(g.body)
			require.NoError(t, err)
			require.Equal(t, "Qhronos test delivery", d.Name)
			msgID := g.header.Get("webhook-id")
			require.NotEmpty(t, msgID)

			status <- http.StatusInternalServerError
			res = e.do("POST", "/endpoints/"+id+"/test", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			out = res.object(t)
			require.Equal(t, false, out["delivered"])
			require.Equal(t, float64(500), out["status_code"])
			require.Contains(t, out["error"], "500")
			<-received

			// Disabled endpoints are still tested: operators check a
			// receiver before enabling it again.
			require.Equal(t, http.StatusOK, e.do("POST", "/endpoints/"+id+"/disable", e.master, nil).Status)
			status <- http.StatusNoContent
			res = e.do("POST", "/endpoints/"+id+"/test", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, true, res.object(t)["delivered"])
			<-received
			require.Equal(t, http.StatusOK, e.do("POST", "/endpoints/"+id+"/enable", e.master, nil).Status)

			// Neither test counted: no attempt logged, health untouched.
			attempts, err := e.store.ListAttempts(context.Background(), msgID)
			if err == nil {
				require.Empty(t, attempts)
			} else {
				require.ErrorIs(t, err, model.ErrNotFound)
			}
			cur := e.do("GET", "/endpoints/"+id, e.master, nil).object(t)
			require.Equal(t, "healthy", cur["state"])
			health := cur["health"].(map[string]any)
			require.Equal(t, float64(0), health["attempts"])
			require.Equal(t, float64(0), health["consecutive_failures"])

			// Out of scope is not found; read access may not send; brokers
			// are refused naming id.
			other := e.mint("write", []string{"team-z"})
			require.Equal(t, http.StatusNotFound, e.do("POST", "/endpoints/"+id+"/test", other, nil).Status)
			reader := e.mint("read", nil)
			require.Equal(t, http.StatusForbidden, e.do("POST", "/endpoints/"+id+"/test", reader, nil).Status)
			broker := endpointBody()
			broker["url"] = "nats://127.0.0.1:4222"
			bid := e.createEndpoint(e.master, broker)["id"].(string)
			res = e.do("POST", "/endpoints/"+bid+"/test", e.master, nil)
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			require.Equal(t, "id", res.object(t)["field"])
		})
	}
}
