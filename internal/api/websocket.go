package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/hub"
	"github.com/qhronos/qhronos/internal/model"
)

// WebSocketOptions tunes /ws.
type WebSocketOptions struct {
	AllowedOrigins   []string // Origin host patterns; requests without Origin (non-browsers) are allowed
	HandshakeTimeout time.Duration
	ReadLimit        int64
	PingInterval     time.Duration
	SendQueue        int
}

func (o *WebSocketOptions) withDefaults() {
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 5 * time.Second
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = 16 << 10
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 30 * time.Second
	}
	if o.SendQueue <= 0 {
		o.SendQueue = 64
	}
}

var validClientName = regexp.MustCompile(`^[A-Za-z0-9._:@-]{1,255}$`)

// wsFrame is any frame a client sends.
type wsFrame struct {
	Type         string   `json:"type"`
	ClientName   string   `json:"client_name"`
	Tags         []string `json:"tags"`
	All          bool     `json:"all"`
	Token        string   `json:"token"`
	EventID      string   `json:"event_id"`
	OccurrenceID string   `json:"occurrence_id"`
}

func frame(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func errorFrame(msg string) []byte { return frame(gin.H{"type": "error", "message": msg}) }

// mayHook is the client-hook rule: master and admin tokens may hook any
// client; other tokens (read access or more) may hook the client named by
// their subject or by a tag in their scope.
func mayHook(p auth.Principal, clientName string) bool {
	if p.Master || p.Allows(model.AccessAdmin) {
		return true
	}
	return p.Allows(model.AccessRead) && (p.Subject == clientName || slices.Contains(p.Scope, clientName))
}

// mayListen is the tag-listener rule: every requested tag within the scope.
func mayListen(p auth.Principal, tags []string) bool {
	scope, unrestricted := p.ScopeFilter()
	if unrestricted {
		return true
	}
	for _, t := range tags {
		if !slices.Contains(scope, t) {
			return false
		}
	}
	return p.Allows(model.AccessRead)
}

// websocketHandler serves /ws: the original handshake frame, then event
// frames out and acknowledgements in.
func (s *Server) websocketHandler(h *hub.Hub, opts WebSocketOptions) gin.HandlerFunc {
	opts.withDefaults()
	return func(c *gin.Context) {
		// The server's read/write deadlines are for plain requests; a
		// WebSocket lives on its own keepalive.
		rc := http.NewResponseController(c.Writer)
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
		conn, err := websocket.Accept(c.Writer, c.Request, &websocket.AcceptOptions{OriginPatterns: opts.AllowedOrigins})
		if err != nil {
			s.log.Info("websocket rejected", zap.String("request_id", requestID(c)), zap.Error(err))
			return
		}
		defer func() { _ = conn.CloseNow() }()
		conn.SetReadLimit(opts.ReadLimit)
		s.serveWebSocket(c.Request.Context(), conn, h, opts, "ip:"+s.clientIP(c).String())
	}
}

// serveWebSocket runs one session. limitKey is the client address's
// rate-limit bucket, charged for a failed handshake as for a REST 401.
func (s *Server) serveWebSocket(ctx context.Context, conn *websocket.Conn, h *hub.Hub, opts WebSocketOptions, limitKey string) {
	l, ok := s.wsHandshake(ctx, conn, opts, limitKey)
	if !ok {
		return
	}
	h.Add(l)
	defer h.Remove(l)
	if err := conn.Write(ctx, websocket.MessageText, frame(gin.H{"type": "ack", "message": "subscription registered"})); err != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.wsWriter(ctx, cancel, conn, l, opts)
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var f wsFrame
		if json.Unmarshal(data, &f) != nil {
			_ = conn.Write(ctx, websocket.MessageText, errorFrame("invalid JSON frame"))
			continue
		}
		switch {
		case f.Type == "ack" && l.ClientName == "":
			_ = conn.Write(ctx, websocket.MessageText, errorFrame("acknowledge not supported for tag-listener"))
		case f.Type == "ack":
			_ = conn.Write(ctx, websocket.MessageText, s.wsAck(ctx, l, f))
		default:
			_ = conn.Write(ctx, websocket.MessageText, errorFrame("unsupported message type"))
		}
	}
}

// wsHandshake reads and checks the first frame within the deadline. The
// deadline closes the connection with a policy-violation frame (a read
// context's expiry would drop it without one).
func (s *Server) wsHandshake(ctx context.Context, conn *websocket.Conn, opts WebSocketOptions, limitKey string) (*hub.Listener, bool) {
	timer := time.AfterFunc(opts.HandshakeTimeout, func() {
		_ = conn.Close(websocket.StatusPolicyViolation, "handshake timeout")
	})
	_, data, err := conn.Read(ctx)
	if !timer.Stop() || err != nil {
		return nil, false
	}
	var f wsFrame
	if err := json.Unmarshal(data, &f); err != nil {
		return s.wsRefuse(ctx, conn, "handshake must be a JSON object")
	}
	p, err := s.Auth.Authenticate(ctx, f.Token)
	if err != nil {
		if errors.Is(err, auth.ErrUnauthenticated) {
			// Charged to the client address's bucket, the one REST 401s use.
			if res, ok := s.allow(ctx, limitKey); ok && !res.Allowed {
				return s.wsRefuse(ctx, conn, "rate limit exceeded")
			}
		}
		return s.wsRefuse(ctx, conn, "unauthorized")
	}
	if !p.Allows(model.AccessRead) {
		// A portal session's token: the portal has no live feed.
		return s.wsRefuse(ctx, conn, "insufficient access")
	}
	var l *hub.Listener
	switch {
	case f.Type == "client-hook":
		if !validClientName.MatchString(f.ClientName) {
			return s.wsRefuse(ctx, conn, "client_name: required, letters, digits and ._:@- only")
		}
		if !mayHook(p, f.ClientName) {
			return s.wsRefuse(ctx, conn, "client_name: not allowed for this token")
		}
		l = hub.NewListener(f.ClientName, nil, p.CanRead, opts.SendQueue)
	case f.Type == "tag-listener" && f.All:
		// Every event the token may read: each frame is checked against its
		// scope as it goes out.
		if len(f.Tags) > 0 {
			return s.wsRefuse(ctx, conn, "tags: leave out with all")
		}
		l = hub.NewListener("", nil, p.CanRead, opts.SendQueue)
		l.All = true
	case f.Type == "tag-listener":
		if len(f.Tags) == 0 || len(f.Tags) > 100 {
			return s.wsRefuse(ctx, conn, "tags: between 1 and 100 tags required, or all: true")
		}
		if !mayListen(p, f.Tags) {
			return s.wsRefuse(ctx, conn, "tags: outside token scope")
		}
		l = hub.NewListener("", f.Tags, p.CanRead, opts.SendQueue)
	default:
		return s.wsRefuse(ctx, conn, `type: must be "client-hook" or "tag-listener"`)
	}
	l.TokenID, l.ExpiresAt = p.TokenID, p.ExpiresAt
	return l, true
}

func (s *Server) wsRefuse(ctx context.Context, conn *websocket.Conn, msg string) (*hub.Listener, bool) {
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_ = conn.Write(wctx, websocket.MessageText, errorFrame(msg))
	_ = conn.Close(websocket.StatusPolicyViolation, msg)
	return nil, false
}

// wsWriter sends queued frames and keepalive pings; a slow or dead client
// is disconnected instead of stalling others.
func (s *Server) wsWriter(ctx context.Context, cancel context.CancelFunc, conn *websocket.Conn, l *hub.Listener, opts WebSocketOptions) {
	defer cancel()
	ping := time.NewTicker(opts.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.Slow():
			_ = conn.Close(websocket.StatusPolicyViolation, "slow consumer: send queue full")
			return
		case <-l.Ended():
			_ = conn.Close(websocket.StatusPolicyViolation, l.EndReason())
			return
		case f := <-l.Queue():
			wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
			err := conn.Write(wctx, websocket.MessageText, f)
			wcancel()
			if err != nil {
				return
			}
		case <-ping.C:
			pctx, pcancel := context.WithTimeout(ctx, opts.PingInterval)
			err := conn.Ping(pctx)
			pcancel()
			if err != nil {
				return
			}
		}
	}
}

// errUnknownOccurrence is the one answer to an ack the listener may not
// make: unknown, unreadable by its token, or never sent to its client name.
// Answering them alike reveals nothing about other tenants' occurrences.
var errUnknownOccurrence = errorFrame("occurrence_id: unknown occurrence")

// wsAck completes an occurrence that awaits this client's acknowledgement
// (see events.Service.Acknowledge).
func (s *Server) wsAck(ctx context.Context, l *hub.Listener, f wsFrame) []byte {
	err := s.Events.Acknowledge(ctx, events.Ack{OccurrenceID: f.OccurrenceID, EventID: f.EventID,
		ClientName: l.ClientName, CanRead: l.CanRead})
	switch {
	case errors.Is(err, events.ErrUnknownOccurrence):
		return errUnknownOccurrence
	case errors.Is(err, events.ErrNotAwaitingAck):
		return errorFrame("occurrence_id: not awaiting acknowledgement")
	case err != nil:
		s.log.Error("acknowledge occurrence", zap.String("occurrence_id", f.OccurrenceID), zap.Error(err))
		return errorFrame("acknowledgement could not be recorded; retry")
	}
	return frame(gin.H{"type": "ack", "message": "acknowledged", "occurrence_id": f.OccurrenceID})
}
