package calendar

import (
	"container/list"
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/planner"
	"github.com/qhronos/qhronos/internal/recurrence"
	"github.com/qhronos/qhronos/internal/repository"
)

// DefaultCacheSize is how many compiled calendars a Cache keeps.
const DefaultCacheSize = 256

// Cache loads the calendars an event honours and compiles each once per
// version, keeping the most recently used ones. It is safe for concurrent
// use; the events service and the expander share one. It implements
// lifecycle.Calendars.
type Cache struct {
	limits recurrence.Limits
	size   int

	mu    sync.Mutex
	order *list.List // front: most recently used; values are *cacheEntry
	byID  map[string]*list.Element
}

type cacheEntry struct {
	id       string
	version  int64
	compiled *Compiled
}

// NewCache returns a cache of up to size compiled calendars (size < 1 is
// DefaultCacheSize); rules compile under limits, as on the API.
func NewCache(limits recurrence.Limits, size int) *Cache {
	if size < 1 {
		size = DefaultCacheSize
	}
	return &Cache{limits: limits, size: size, order: list.New(), byID: map[string]*list.Element{}}
}

// Planner loads the referenced calendars inside tx (one query) and returns
// them compiled, in the order of refs, with the event's policy for each. A
// calendar that does not exist is a 400 naming it.
func (c *Cache) Planner(ctx context.Context, tx *repository.Store, refs []model.CalendarRef) ([]planner.Calendar, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	cals, err := tx.GetCalendars(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]model.Calendar, len(cals))
	for _, cal := range cals {
		byID[cal.ID] = cal
	}
	out := make([]planner.Calendar, 0, len(refs))
	for _, r := range refs {
		cal, ok := byID[r.ID]
		if !ok {
			return nil, &input.Error{Status: http.StatusBadRequest, Field: "calendars",
				Message: "calendars: unknown calendar " + r.ID}
		}
		compiled, err := c.Compiled(cal)
		if err != nil {
			return nil, err
		}
		out = append(out, planner.Calendar{Blocks: compiled, Policy: r.Policy})
	}
	return out, nil
}

// Compiled returns cal compiled, from the cache when this version was
// compiled before.
func (c *Cache) Compiled(cal model.Calendar) (*Compiled, error) {
	c.mu.Lock()
	if el, ok := c.byID[cal.ID]; ok {
		e := el.Value.(*cacheEntry)
		if e.version == cal.Version {
			c.order.MoveToFront(el)
			c.mu.Unlock()
			return e.compiled, nil
		}
	}
	c.mu.Unlock()
	compiled, err := Compile(cal, c.limits)
	if err != nil {
		return nil, fmt.Errorf("compile %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[cal.ID]; ok {
		e := el.Value.(*cacheEntry)
		if e.version > cal.Version {
			return compiled, nil // a newer version is cached; keep it
		}
		e.version, e.compiled = cal.Version, compiled
		c.order.MoveToFront(el)
		return compiled, nil
	}
	c.byID[cal.ID] = c.order.PushFront(&cacheEntry{id: cal.ID, version: cal.Version, compiled: compiled})
	for c.order.Len() > c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.byID, oldest.Value.(*cacheEntry).id)
	}
	return compiled, nil
}

// Len is how many compiled calendars the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
