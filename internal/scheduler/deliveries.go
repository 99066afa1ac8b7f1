package scheduler

import (
	"container/list"
	"encoding/json"
	"sync"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/model"
)

// deliveryCacheSize bounds the prepared deliveries kept: a prepared delivery
// is a few hundred bytes, and an event that fires less often than this many
// others is cheap to prepare again.
const deliveryCacheSize = 4096

// prepareFunc turns an event's action into its ready delivery
// (actions.Registry.Prepare).
type prepareFunc func(typ string, params json.RawMessage) (actions.Delivery, error)

// deliveries prepares each event version's action once and keeps the result
// for its later attempts, in a small LRU. It holds one entry per event: an
// edited event (a new version) replaces its entry at its next attempt, and
// the entries of deleted or idle events are evicted as others arrive.
type deliveries struct {
	prepare prepareFunc
	size    int

	mu      sync.Mutex
	recent  *list.List               // of *deliveryEntry, most recently used first
	byEvent map[string]*list.Element // event id → its element in recent
}

type deliveryEntry struct {
	eventID  string
	version  int64
	delivery actions.Delivery
}

func newDeliveries(size int, prepare prepareFunc) *deliveries {
	return &deliveries{prepare: prepare, size: max(size, 1), recent: list.New(), byEvent: map[string]*list.Element{}}
}

// get returns the delivery of ev's current version, preparing it on its
// first use. A failed preparation is not kept.
func (c *deliveries) get(ev *model.Event) (actions.Delivery, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byEvent[ev.ID]
	if ok {
		if e := el.Value.(*deliveryEntry); e.version == ev.Version {
			c.recent.MoveToFront(el)
			return e.delivery, nil
		}
		c.remove(el)
	}
	// Prepare does no I/O: running it under the lock keeps it to once per
	// version when several occurrences of an event fire together.
	d, err := c.prepare(ev.Action.Type, ev.Action.Params)
	if err != nil {
		return nil, err
	}
	c.byEvent[ev.ID] = c.recent.PushFront(&deliveryEntry{eventID: ev.ID, version: ev.Version, delivery: d})
	if c.recent.Len() > c.size {
		c.remove(c.recent.Back())
	}
	return d, nil
}

func (c *deliveries) remove(el *list.Element) {
	c.recent.Remove(el)
	delete(c.byEvent, el.Value.(*deliveryEntry).eventID)
}
