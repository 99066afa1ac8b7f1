package scheduler

import (
	"container/list"
	"crypto/sha256"
	"encoding/json"
	"sync"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/model"
)

// deliveryCacheSize bounds the prepared deliveries kept: a prepared delivery
// is a few hundred bytes, and an action that fires less often than this many
// others is cheap to prepare again.
const deliveryCacheSize = 4096

// prepareFunc turns an event's action into its ready delivery
// (actions.Registry.Prepare).
type prepareFunc func(typ string, params json.RawMessage) (actions.Delivery, error)

// deliveries prepares each action once and keeps the result for its later
// attempts, in a small LRU. An entry is keyed by the action's content (type
// and params), not by its event: a delivery is made from those alone, so
// the many events that share a destination (one URL, one endpoint) share
// one preparation, and a one-time event whose action an earlier one had
// costs none. An edited event's new params are a new key; the entries of
// edited, deleted or idle actions are evicted as others arrive.
type deliveries struct {
	prepare prepareFunc
	size    int

	mu       sync.Mutex
	recent   *list.List                  // of *deliveryEntry, most recently used first
	byAction map[actionKey]*list.Element // action → its element in recent
}

// actionKey is the SHA-256 of an action's type and params: a fixed-size
// key, however large the params (an API call's body).
type actionKey [sha256.Size]byte

func keyOf(a *model.Action) actionKey {
	h := sha256.New()
	h.Write([]byte(a.Type))
	h.Write([]byte{0})
	h.Write(a.Params)
	var k actionKey
	h.Sum(k[:0])
	return k
}

type deliveryEntry struct {
	key      actionKey
	delivery actions.Delivery
}

func newDeliveries(size int, prepare prepareFunc) *deliveries {
	return &deliveries{prepare: prepare, size: max(size, 1), recent: list.New(), byAction: map[actionKey]*list.Element{}}
}

// get returns the delivery of ev's action, preparing it on its first use.
// A failed preparation is not kept.
func (c *deliveries) get(ev *model.Event) (actions.Delivery, error) {
	return c.getAction(ev.Action)
}

// getAction returns the delivery of an action, preparing it on its first
// use.
func (c *deliveries) getAction(a model.Action) (actions.Delivery, error) {
	key := keyOf(&a)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byAction[key]; ok {
		c.recent.MoveToFront(el)
		return el.Value.(*deliveryEntry).delivery, nil
	}
	// Prepare does no I/O: running it under the lock keeps it to once per
	// action when several occurrences fire together.
	d, err := c.prepare(a.Type, a.Params)
	if err != nil {
		return nil, err
	}
	c.byAction[key] = c.recent.PushFront(&deliveryEntry{key: key, delivery: d})
	if c.recent.Len() > c.size {
		c.remove(c.recent.Back())
	}
	return d, nil
}

func (c *deliveries) remove(el *list.Element) {
	c.recent.Remove(el)
	delete(c.byAction, el.Value.(*deliveryEntry).key)
}
