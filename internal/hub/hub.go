// Package hub keeps the WebSocket listeners of this instance and fans frames
// out to them, across instances, over the coordination bus. A frame for a
// client-hook reaches every connection of that client name on every
// instance; the sender learns how many received it, so an occurrence with no
// listener anywhere can be retried.
package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/startstop"
)

const (
	deliverChannel = "ws.deliver"
	replyPrefix    = "ws.reply."
)

// Listener is one connected WebSocket: a client-hook (ClientName set) or a
// tag-listener (Tags set, or All). Sends never block: a full queue marks the
// listener slow and it is disconnected.
type Listener struct {
	ClientName string
	Tags       []string
	// All makes a tag-listener of every event its principal may read,
	// tagged or not (the console's Live page without a tag filter).
	All bool
	// CanRead reports whether the listener's principal may read an event
	// with these tags over REST. Every frame, client-hook or tag-listener,
	// goes only to listeners that may read its event.
	CanRead func(tags []string) bool
	// TokenID and ExpiresAt tie the session to its JWT: the session ends
	// when the token is revoked or expires. Both are zero for the master
	// token.
	TokenID   string
	ExpiresAt time.Time

	queue     chan []byte
	slow      chan struct{}
	once      sync.Once
	ended     chan struct{}
	endOnce   sync.Once
	endReason string
}

// NewListener makes a listener with a send queue of the given size.
func NewListener(clientName string, tags []string, canRead func([]string) bool, queue int) *Listener {
	return &Listener{ClientName: clientName, Tags: tags, CanRead: canRead, queue: make(chan []byte, queue),
		slow: make(chan struct{}), ended: make(chan struct{})}
}

// Ended is closed when the session must close, for EndReason.
func (l *Listener) Ended() <-chan struct{} { return l.ended }

// EndReason says why Ended was closed ("token revoked", "token expired").
func (l *Listener) EndReason() string {
	select {
	case <-l.ended:
		return l.endReason
	default:
		return ""
	}
}

// end asks the session to close; the first reason wins.
func (l *Listener) end(reason string) {
	l.endOnce.Do(func() {
		l.endReason = reason
		close(l.ended)
	})
}

// Queue delivers frames to the connection's writer.
func (l *Listener) Queue() <-chan []byte { return l.queue }

// Slow is closed when a frame could not be queued; the connection must go.
func (l *Listener) Slow() <-chan struct{} { return l.slow }

func (l *Listener) offer(frame []byte) bool {
	select {
	case l.queue <- frame:
		return true
	default:
		l.once.Do(func() { close(l.slow) })
		return false
	}
}

// delivery is what travels between instances.
type delivery struct {
	ID         string          `json:"id"`
	ClientName string          `json:"client_name,omitempty"`
	Tags       []string        `json:"tags,omitempty"`
	Frame      json.RawMessage `json:"frame"`
	Origin     string          `json:"origin"`
	ReplyTo    string          `json:"reply_to,omitempty"`
}

type reply struct {
	ID        string `json:"id"`
	Delivered int    `json:"delivered"`
}

// Hub is this instance's registry of listeners.
type Hub struct {
	startstop.Base

	bus        coordination.Bus
	instanceID string
	log        *zap.Logger

	ready     chan struct{}
	readyOnce sync.Once
	mu        sync.RWMutex
	clients   map[string]map[*Listener]struct{}
	listeners map[*Listener]struct{}
	waiting   map[string]chan int
	// remote holds, per other instance that announced tag-listeners, until
	// when the announcement counts (see presence.go).
	remote     map[string]time.Time
	presenceMu sync.Mutex // one announcement at a time

	// outbox holds frames for other instances that need no reply: every
	// tag-listener frame, and client-hook frames already delivered here.
	// The delivery path only enqueues and never waits on the bus (a Redis
	// outage would otherwise serialize outcome recording behind publish
	// timeouts).
	outbox  chan []byte
	dropped atomic.Uint64
}

// Bounds of the outbox.
const (
	outboxSize     = 4096
	publishTimeout = 2 * time.Second
	publishBatch   = 256 // frames per round trip to the bus
)

// New builds a hub publishing on bus as instanceID.
func New(bus coordination.Bus, instanceID string, logger *zap.Logger) *Hub {
	return &Hub{bus: bus, instanceID: instanceID, log: logger.Named("hub"), ready: make(chan struct{}),
		clients: map[string]map[*Listener]struct{}{}, listeners: map[*Listener]struct{}{},
		waiting: map[string]chan int{}, remote: map[string]time.Time{}, outbox: make(chan []byte, outboxSize)}
}

// DroppedFrames counts frames for other instances that never reached the
// bus: the outbox was full or the publish failed (Redis away). For metrics.
func (h *Hub) DroppedFrames() uint64 { return h.dropped.Load() }

var _ startstop.Service = (*Hub)(nil)

// Start publishes this instance's outbox, and subscribes to the deliveries
// of other instances and relays them, until ctx ends or Stop is called. It
// does not wait for the bus: Ready closes once subscribed, and a failed
// subscription is logged (this instance then serves its own listeners only).
func (h *Hub) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := h.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		h.publishOutbox(ctx)
	}()
	go func() {
		defer wg.Done()
		h.announceEvery(ctx)
	}()
	go func() {
		defer wg.Done()
		if err := h.relay(ctx); err != nil && ctx.Err() == nil {
			h.log.Error("websocket hub stopped", zap.Error(err))
		}
	}()
	go func() {
		wg.Wait()
		stopped()
	}()
	return nil
}

// relay subscribes to deliveries and replies from other instances and
// hands them on until ctx ends.
func (h *Hub) relay(ctx context.Context) error {
	deliveries, err := h.bus.Subscribe(ctx, deliverChannel)
	if err != nil {
		return fmt.Errorf("subscribe to websocket deliveries: %w", err)
	}
	replies, err := h.bus.Subscribe(ctx, replyPrefix+h.instanceID)
	if err != nil {
		return fmt.Errorf("subscribe to websocket replies: %w", err)
	}
	present, err := h.bus.Subscribe(ctx, presenceChannel)
	if err != nil {
		return fmt.Errorf("subscribe to websocket listener presence: %w", err)
	}
	// Those with tag-listeners answer, and this instance feeds them from
	// then on; until the answers come it feeds nobody elsewhere, as if it
	// had started a moment later.
	go h.publishPresence(ctx, presence{Origin: h.instanceID, Query: true})
	h.readyOnce.Do(func() { close(h.ready) })
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-deliveries:
			if !ok {
				return nil
			}
			h.onDelivery(ctx, msg)
		case msg, ok := <-replies:
			if !ok {
				return nil
			}
			h.onReply(msg)
		case msg, ok := <-present:
			if !ok {
				return nil
			}
			h.onPresence(ctx, msg)
		}
	}
}

func (h *Hub) onDelivery(ctx context.Context, msg []byte) {
	var d delivery
	if err := json.Unmarshal(msg, &d); err != nil || d.Origin == h.instanceID {
		return
	}
	n := h.deliverLocal(d)
	if d.ReplyTo != "" && n > 0 {
		b, _ := json.Marshal(reply{ID: d.ID, Delivered: n})
		if err := h.bus.Publish(ctx, replyPrefix+d.ReplyTo, b); err != nil {
			h.log.Warn("publish websocket reply", zap.Error(err))
		}
	}
}

func (h *Hub) onReply(msg []byte) {
	var r reply
	if err := json.Unmarshal(msg, &r); err != nil {
		return
	}
	h.mu.RLock()
	ch := h.waiting[r.ID]
	h.mu.RUnlock()
	if ch != nil {
		select {
		case ch <- r.Delivered:
		default:
		}
	}
}

// Ready is closed once Start has subscribed to deliveries from other instances.
func (h *Hub) Ready() <-chan struct{} { return h.ready }

// Add registers a listener; Remove forgets it. A tag-listener is announced
// to the other instances before Add returns (waiting at most publishTimeout
// for the bus), so that they feed it from then on.
func (h *Hub) Add(l *Listener) {
	h.mu.Lock()
	if l.ClientName != "" {
		if h.clients[l.ClientName] == nil {
			h.clients[l.ClientName] = map[*Listener]struct{}{}
		}
		h.clients[l.ClientName][l] = struct{}{}
		h.mu.Unlock()
		return
	}
	h.listeners[l] = struct{}{}
	h.mu.Unlock()
	h.announce(context.Background(), true)
}

// Remove forgets a listener. When the last tag-listener leaves, the other
// instances are told (in the background) to stop feeding this one.
func (h *Hub) Remove(l *Listener) {
	h.mu.Lock()
	if set := h.clients[l.ClientName]; set != nil {
		delete(set, l)
		if len(set) == 0 {
			delete(h.clients, l.ClientName)
		}
	}
	_, tagListener := h.listeners[l]
	delete(h.listeners, l)
	last := tagListener && len(h.listeners) == 0
	h.mu.Unlock()
	if last {
		go h.announce(context.Background(), true)
	}
}

// Connections counts this instance's listeners (for metrics).
func (h *Hub) Connections() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n := len(h.listeners)
	for _, set := range h.clients {
		n += len(set)
	}
	return n
}

func (h *Hub) deliverLocal(d delivery) int {
	h.mu.RLock()
	var targets []*Listener
	if d.ClientName != "" {
		for l := range h.clients[d.ClientName] {
			if l.CanRead(d.Tags) {
				targets = append(targets, l)
			}
		}
	} else {
		for l := range h.listeners {
			if (l.All || sharesTag(l.Tags, d.Tags)) && l.CanRead(d.Tags) {
				targets = append(targets, l)
			}
		}
	}
	h.mu.RUnlock()
	n := 0
	for _, l := range targets {
		if l.offer(d.Frame) {
			n++
		}
	}
	return n
}

func sharesTag(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// SendToClient pushes frame to every connection of clientName, on every
// instance, whose principal may read an event with tags, and reports how
// many received it. When none is connected here it waits up to wait for
// another instance to report a delivery.
func (h *Hub) SendToClient(ctx context.Context, clientName string, tags []string, frame []byte, wait time.Duration) (int, error) {
	d := delivery{ID: uuid.NewString(), ClientName: clientName, Tags: tags, Frame: frame, Origin: h.instanceID,
		ReplyTo: h.instanceID}
	local := h.deliverLocal(d)
	var replies chan int
	if local == 0 {
		replies = make(chan int, 8)
		h.mu.Lock()
		h.waiting[d.ID] = replies
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			delete(h.waiting, d.ID)
			h.mu.Unlock()
		}()
	} else {
		d.ReplyTo = ""
	}
	b, _ := json.Marshal(d)
	if local > 0 {
		// Delivered here already: connections elsewhere get it through the
		// outbox, without holding the attempt on the bus.
		h.enqueue(b)
		return local, nil
	}
	if err := h.bus.Publish(ctx, deliverChannel, b); err != nil {
		return 0, fmt.Errorf("publish websocket delivery: %w", err)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case n := <-replies:
		return n, nil
	case <-timer.C:
		return 0, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Broadcast pushes frame to the tag-listeners of any of tags, and to those
// listening to all events, on every instance: best effort, at most once. It
// never blocks: local listeners get the frame at once, other instances
// through the outbox; a full outbox drops the frame and counts it. Only
// instances that announced tag-listeners are sent frames (presence.go).
func (h *Hub) Broadcast(tags []string, frame []byte) {
	d := delivery{ID: uuid.NewString(), Tags: tags, Frame: frame, Origin: h.instanceID}
	h.deliverLocal(d)
	if !h.remoteListening() {
		return
	}
	b, _ := json.Marshal(d)
	h.enqueue(b)
}

// enqueue hands a delivery to the outbox; a full outbox drops it, counted.
func (h *Hub) enqueue(b []byte) {
	select {
	case h.outbox <- b:
	default:
		h.dropped.Add(1)
	}
}

// publishOutbox sends queued frames to the bus, all that are waiting in
// one round trip (up to publishBatch): a burst of deliveries broadcasts
// thousands of frames a second, and a round trip each cost 3 % of the
// machine's CPU in a 20,000-delivery burst. While the bus fails it drops
// them (counted), logging once per outage, not per frame.
func (h *Hub) publishOutbox(ctx context.Context) {
	failing := false
	batch := make([][]byte, 0, publishBatch)
	for {
		select {
		case <-ctx.Done():
			return
		case b := <-h.outbox:
			batch = append(batch[:0], b)
		more:
			for len(batch) < publishBatch {
				select {
				case b := <-h.outbox:
					batch = append(batch, b)
				default:
					break more
				}
			}
			pctx, cancel := context.WithTimeout(ctx, publishTimeout)
			err := h.bus.Publish(pctx, deliverChannel, batch...)
			cancel()
			switch {
			case err != nil && ctx.Err() == nil:
				h.dropped.Add(uint64(len(batch)))
				if !failing {
					h.log.Warn("publish websocket frames failing; dropping them until the bus answers", zap.Error(err))
				}
				failing = true
			case err == nil && failing:
				h.log.Info("publish websocket frames recovered", zap.Uint64("dropped_total", h.dropped.Load()))
				failing = false
			}
		}
	}
}
