package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// Subscription is the /ws handshake: a client-hook receives the occurrences
// of events whose action is websocket with that client_name (and may ack
// them); a tag-listener receives one frame per occurrence of events carrying
// any of its tags, whatever their action.
type Subscription struct {
	ClientName string
	Tags       []string
	// All listens to every occurrence the token may read, tagged or not
	// (a tag-listener with "all": true); Tags must then be empty.
	All bool
}

// Frame is a frame the server sends on /ws: "event" (an occurrence), "ack"
// (the answer to the handshake or to an acknowledgement) or "error".
type Frame struct {
	Type         string          `json:"type"`
	Message      string          `json:"message,omitempty"`
	EventID      string          `json:"event_id,omitempty"`
	OccurrenceID string          `json:"occurrence_id,omitempty"`
	ScheduledAt  time.Time       `json:"scheduled_at,omitzero"`
	Attempt      int             `json:"attempt,omitempty"`
	Name         string          `json:"name,omitempty"`
	Description  string          `json:"description,omitempty"`
	Tags         []string        `json:"tags,omitempty"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
	// Payload repeats Metadata for clients of the original protocol.
	Payload json.RawMessage `json:"payload,omitempty"`
	// RequireAck is set on client-hook frames of events whose action asks
	// for an acknowledgement; the occurrence waits until Ack (or retries).
	RequireAck bool `json:"require_ack,omitempty"`
	// Webhook is the signed request the delivery would carry as a webhook
	// (client-hook frames only).
	Webhook *SignedWebhook `json:"webhook,omitempty"`
}

// SignedWebhook is a webhook request as the server signed it: forward Body
// verbatim with Headers and a receiver verifies it like any delivery.
type SignedWebhook struct {
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// HandshakeError is the server's refusal of a subscription (bad token,
// client_name or tags outside the token's scope).
type HandshakeError struct{ Message string }

func (e *HandshakeError) Error() string { return "qhronos: websocket handshake refused: " + e.Message }

// Conn is a subscribed /ws connection. Next must be called from one
// goroutine; Ack and Close may be called from any.
type Conn struct {
	ws *websocket.Conn
}

// Subscribe connects to /ws and subscribes with the client's token. It
// returns once the server has registered the subscription. ctx bounds the
// dial and the handshake only: the connection outlives it (Next and Ack
// take their own). The connection is dialled with the HTTP client of
// WithWebSocketHTTPClient, if set.
func (c *Client) Subscribe(ctx context.Context, sub Subscription) (*Conn, error) {
	hs := map[string]any{"token": c.token}
	switch {
	case sub.ClientName != "" && len(sub.Tags) == 0:
		hs["type"], hs["client_name"] = "client-hook", sub.ClientName
	case sub.ClientName == "" && len(sub.Tags) > 0 && !sub.All:
		hs["type"], hs["tags"] = "tag-listener", sub.Tags
	case sub.ClientName == "" && len(sub.Tags) == 0 && sub.All:
		hs["type"], hs["all"] = "tag-listener", true
	default:
		return nil, errors.New("subscription: set one of ClientName, Tags or All")
	}
	u := *c.base
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	u.Path = strings.TrimRight(c.base.Path, "/") + "/ws"
	ws, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPClient: c.wsHTTPClient(),
		HTTPHeader: http.Header{"User-Agent": {c.userAgent}}})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, &APIError{StatusCode: resp.StatusCode, Message: "websocket upgrade refused"}
		}
		return nil, fmt.Errorf("dial %s: %w", u.Redacted(), err)
	}
	ws.SetReadLimit(4 << 20)
	conn := &Conn{ws: ws}
	b, _ := json.Marshal(hs)
	if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
		_ = ws.CloseNow()
		return nil, fmt.Errorf("send websocket handshake: %w", err)
	}
	f, err := conn.Next(ctx)
	switch {
	case err != nil:
		_ = ws.CloseNow()
		return nil, fmt.Errorf("read websocket handshake answer: %w", err)
	case f.Type == "error":
		_ = ws.CloseNow()
		return nil, &HandshakeError{Message: f.Message}
	case f.Type != "ack":
		_ = ws.CloseNow()
		return nil, fmt.Errorf("websocket handshake: unexpected %q frame", f.Type)
	}
	return conn, nil
}

// wsHTTPClient is the HTTP client set by WithWebSocketHTTPClient, or else
// the client's own, without its overall timeout, which would cut a
// long-lived connection.
func (c *Client) wsHTTPClient() *http.Client {
	src := c.http
	if c.wsHTTP != nil {
		src = c.wsHTTP
	}
	h := *src
	h.Timeout = 0
	return &h
}

// Next reads the next frame: event frames, and the server's answers to
// acknowledgements ("ack" or "error" frames).
func (c *Conn) Next(ctx context.Context) (Frame, error) {
	_, data, err := c.ws.Read(ctx)
	if err != nil {
		return Frame{}, err
	}
	var f Frame
	if err := json.Unmarshal(data, &f); err != nil {
		return Frame{}, fmt.Errorf("decode websocket frame: %w", err)
	}
	return f, nil
}

// Ack acknowledges an event frame of a client-hook; the server answers with
// an "ack" or "error" frame that Next returns.
func (c *Conn) Ack(ctx context.Context, f Frame) error {
	b, _ := json.Marshal(map[string]string{"type": "ack", "event_id": f.EventID, "occurrence_id": f.OccurrenceID})
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// Close closes the connection normally.
func (c *Conn) Close() error { return c.ws.Close(websocket.StatusNormalClosure, "") }
