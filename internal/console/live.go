package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/client"
)

type liveData struct {
	Tags string
}

func (c *Console) livePage(w http.ResponseWriter, r *http.Request, s *session) {
	c.render(w, r, s, "live", http.StatusOK, view{Title: "Live", Nav: "live",
		Data: liveData{Tags: strings.TrimSpace(r.URL.Query().Get("tags"))}})
}

// sse writes server-sent events, one writer at a time.
type sse struct {
	mu sync.Mutex
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (s *sse) send(event string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", event, b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// Bounds of the live stream.
const (
	maxLiveTags     = 100
	maxStatusWatch  = 32               // occurrences followed at once per stream
	statusWatchSpan = 2 * time.Minute  // how long one is followed
	liveKeepalive   = 15 * time.Second // comment lines keep proxies from closing an idle stream
	// liveRecheck is how often the stream asks the API whether the token
	// still holds, so a revoked or expired one signs the page out even
	// while no frame arrives.
	liveRecheck = 2 * time.Second
)

// liveSubscription is what to listen to: the tags asked for, or else every
// event the token may read, tagged or not.
func liveSubscription(r *http.Request) client.Subscription {
	var tags []string
	seen := map[string]bool{}
	for _, t := range strings.Split(r.URL.Query().Get("tags"), ",") {
		if t = strings.TrimSpace(t); t != "" && !seen[t] {
			seen[t] = true
			tags = append(tags, t)
		}
	}
	if len(tags) > 0 {
		return client.Subscription{Tags: tags[:min(len(tags), maxLiveTags)]}
	}
	return client.Subscription{All: true}
}

// liveStream relays the /ws frames of every event the session's token may
// read (or of the tags asked for) as SSE, and
// follows each fired occurrence's status until it is final. When /ws ends
// the session (token revoked or expired) the page is told to sign out.
func (c *Console) liveStream(w http.ResponseWriter, r *http.Request, s *session) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	_ = rc.SetReadDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := &sse{w: w, rc: rc}
	ctx, cancel := context.WithCancel(r.Context())
	var followers sync.WaitGroup
	// Followers write to w: they end before the handler returns.
	defer func() {
		cancel()
		followers.Wait()
	}()

	sub := liveSubscription(r)
	// The subscription holds once /ws acknowledges it (Subscribe returns
	// then); only then is the page told it is listening, so nothing fired
	// after that is missed.
	hctx, hcancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := c.sdkFor(r, s.Token).Subscribe(hctx, sub)
	hcancel()
	var refused *client.HandshakeError
	switch {
	case errors.As(err, &refused) && refused.Message == "unauthorized":
		_ = out.send("signout", map[string]string{"reason": refused.Message})
		return
	case errors.As(err, &refused):
		msg := "the /ws subscription was refused"
		if refused.Message != "" {
			msg += ": " + refused.Message
		}
		_ = out.send("problem", map[string]string{"message": msg})
		return
	case err != nil:
		c.log.Warn("console live: subscribe to /ws", zap.Error(err))
		_ = out.send("problem", map[string]string{"message": "could not connect to /ws"})
		return
	}
	defer func() { _ = conn.Close() }()
	if err := out.send("listening", map[string]any{"tags": sub.Tags, "all": sub.All}); err != nil {
		return
	}
	frames := make(chan client.Frame, 16)
	ended := make(chan string, 1)
	go func() {
		defer close(frames)
		for {
			f, err := conn.Next(ctx)
			if err != nil {
				if websocket.CloseStatus(err) == websocket.StatusPolicyViolation {
					var ce websocket.CloseError
					if errors.As(err, &ce) {
						ended <- ce.Reason
					}
				}
				return
			}
			select {
			case frames <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	watching := make(chan struct{}, maxStatusWatch)
	keep := time.NewTicker(liveKeepalive)
	defer keep.Stop()
	recheck := time.NewTicker(liveRecheck)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-recheck.C:
			_, err := c.sdkFor(r, s.Token).Events.List(ctx, client.ListEventsParams{Limit: client.Ptr(1)})
			if errors.Is(err, client.ErrUnauthorized) {
				_ = out.send("signout", map[string]string{"reason": "token no longer valid"})
				return
			}
		case <-keep.C:
			out.mu.Lock()
			_, err := fmt.Fprint(w, ": keepalive\n\n")
			if err == nil {
				err = rc.Flush()
			}
			out.mu.Unlock()
			if err != nil {
				return
			}
		case f, ok := <-frames:
			if !ok {
				reason := ""
				select {
				case reason = <-ended:
				default:
				}
				if strings.HasPrefix(reason, "token") || reason == "unauthorized" {
					_ = out.send("signout", map[string]string{"reason": reason})
				} else {
					_ = out.send("problem", map[string]string{"message": "the /ws connection ended " + reason})
				}
				return
			}
			switch f.Type {
			case "event":
				if err := out.send("fired", firedData(f)); err != nil {
					return
				}
				select {
				case watching <- struct{}{}:
					followers.Add(1)
					go func() {
						defer followers.Done()
						defer func() { <-watching }()
						c.followStatus(ctx, r, s, out, f.OccurrenceID)
					}()
				default: // too many followed at once: this one shows as fired only
				}
			case "error":
				if f.Message == "unauthorized" {
					_ = out.send("signout", map[string]string{"reason": f.Message})
					return
				}
				_ = out.send("problem", map[string]string{"message": f.Message})
			}
		}
	}
}

// firedData is what the page shows of a fired occurrence: the frame's
// identity, time, name and tags, not its metadata.
func firedData(f client.Frame) map[string]any {
	return map[string]any{"type": f.Type, "message": f.Message, "event_id": f.EventID,
		"occurrence_id": f.OccurrenceID, "scheduled_at": f.ScheduledAt, "name": f.Name, "tags": f.Tags}
}

// followStatus polls one occurrence until it is final (or the span ends)
// and sends each change.
func (c *Console) followStatus(ctx context.Context, r *http.Request, s *session, out *sse, id string) {
	deadline := time.Now().Add(statusWatchSpan)
	wait := 200 * time.Millisecond
	last := ""
	sdk := c.sdkFor(r, s.Token)
	for time.Now().Before(deadline) {
		o, err := sdk.Occurrences.Get(ctx, id)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, client.ErrUnauthorized) {
			_ = out.send("signout", map[string]string{"reason": "token no longer valid"})
			return
		}
		var ae *client.APIError
		if err != nil && !errors.As(err, &ae) {
			return // not an answer of the API: nothing more to follow
		}
		if err == nil && string(o.Status) != last {
			last = string(o.Status)
			if out.send("status", map[string]any{"occurrence_id": id, "status": o.Status,
				"status_code": o.StatusCode, "attempt_count": o.AttemptCount}) != nil {
				return
			}
			switch o.Status {
			case "completed", "failed", "missed", "cancelled", "skipped", "timed_out":
				return
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(wait*2, 5*time.Second)
	}
}
