package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
)

// failingTransport stands for a transport that answers calls without a
// connection of its own and so cannot upgrade one.
type failingTransport struct{}

func (failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("this transport cannot open a WebSocket")
}

// Subscribe dials with the WithWebSocketHTTPClient client, not the calls'
// one, and the connection outlives the context Subscribe was given.
func TestSubscribeUsesTheWebSocketHTTPClient(t *testing.T) {
	send := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer func() { _ = conn.CloseNow() }()
		ctx := r.Context()
		if _, _, err := conn.Read(ctx); err != nil { // the handshake
			return
		}
		_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"ack"}`))
		select {
		case <-send:
		case <-ctx.Done():
			return
		}
		_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"event","occurrence_id":"o1","tags":["a"]}`))
		_, _, _ = conn.Read(ctx) // until the client closes
	}))
	defer srv.Close()

	calls := &http.Client{Transport: failingTransport{}}
	c, err := client.New(srv.URL, client.WithToken("t"), client.WithRetries(0), client.WithHTTPClient(calls))
	require.NoError(t, err)
	_, err = c.Subscribe(context.Background(), client.Subscription{Tags: []string{"a"}})
	require.ErrorContains(t, err, "cannot open a WebSocket", "without the option the calls' client dials")

	c, err = client.New(srv.URL, client.WithToken("t"), client.WithRetries(0), client.WithHTTPClient(calls),
		client.WithWebSocketHTTPClient(&http.Client{Timeout: time.Minute}))
	require.NoError(t, err)
	dialCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	conn, err := c.Subscribe(dialCtx, client.Subscription{Tags: []string{"a"}})
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	cancel() // the connection outlives the dial's context
	close(send)
	ctx, cancelNext := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelNext()
	f, err := conn.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "event", f.Type)
	require.Equal(t, "o1", f.OccurrenceID)
}
