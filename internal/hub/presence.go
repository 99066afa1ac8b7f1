package hub

import (
	"context"
	"encoding/json"
	"time"

	"go.uber.org/zap"
)

// Tag-listener presence. Feeding tag-listeners costs every delivery a frame
// built, published on the bus and decoded by every instance (6 % of the
// server's CPU in a burst): work for nobody when nobody listens, which is
// the usual case. So each instance with tag-listeners says so on the bus,
// and the others build frames only while some instance listens.
//
// An instance announces when a tag-listener joins (before the session is
// acknowledged, so a listener that has its "subscription registered" is
// known to every instance on the bus), again every presenceEvery while it
// has listeners, when asked (a newly started instance asks), and when its
// last one leaves. An announcement counts for presenceTTL: one that was lost
// (the bus reconnecting) is replaced by the next before it lapses.
const (
	presenceChannel = "ws.presence"
	presenceEvery   = 5 * time.Second
	presenceTTL     = 3 * presenceEvery
)

type presence struct {
	Origin    string `json:"origin"`
	Listening bool   `json:"listening"`
	// Query asks every instance with tag-listeners to announce them.
	Query bool `json:"query,omitempty"`
}

// Listening reports whether a frame for tag-listeners may reach anyone: this
// instance has one, or another may (remoteListening).
func (h *Hub) Listening() bool {
	h.mu.RLock()
	local := len(h.listeners) > 0
	h.mu.RUnlock()
	return local || h.remoteListening()
}

// remoteListening reports whether another instance announced tag-listeners
// lately, or this instance is not yet subscribed to the bus and cannot know
// (it then assumes so).
func (h *Hub) remoteListening() bool {
	select {
	case <-h.ready:
	default:
		return true
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	now := time.Now()
	for _, until := range h.remote {
		if now.Before(until) {
			return true
		}
	}
	return false
}

// onPresence records another instance's announcement, or answers a query.
func (h *Hub) onPresence(ctx context.Context, msg []byte) {
	var p presence
	if err := json.Unmarshal(msg, &p); err != nil || p.Origin == h.instanceID {
		return
	}
	if p.Query {
		go h.announce(ctx, false)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if p.Listening {
		h.remote[p.Origin] = time.Now().Add(presenceTTL)
	} else {
		delete(h.remote, p.Origin)
	}
}

// announce publishes whether this instance has tag-listeners; unless
// always, only when it has some. Announcements are published one at a
// time, each saying what holds when it goes out, so the last one published
// is right (a "none left" racing a listener that just joined cannot land
// after the join's).
func (h *Hub) announce(ctx context.Context, always bool) {
	h.presenceMu.Lock()
	defer h.presenceMu.Unlock()
	h.mu.RLock()
	listening := len(h.listeners) > 0
	h.mu.RUnlock()
	if !listening && !always {
		return
	}
	h.publishPresence(ctx, presence{Origin: h.instanceID, Listening: listening})
}

func (h *Hub) publishPresence(ctx context.Context, p presence) {
	b, _ := json.Marshal(p)
	pctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	if err := h.bus.Publish(pctx, presenceChannel, b); err != nil && ctx.Err() == nil {
		h.log.Debug("publish websocket listener presence", zap.Error(err))
	}
}

// announceEvery renews this instance's announcement while it has
// tag-listeners, and forgets lapsed ones of others, until ctx ends.
func (h *Hub) announceEvery(ctx context.Context) {
	t := time.NewTicker(presenceEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.announce(ctx, false)
			now := time.Now()
			h.mu.Lock()
			for id, until := range h.remote {
				if !now.Before(until) {
					delete(h.remote, id)
				}
			}
			h.mu.Unlock()
		}
	}
}
