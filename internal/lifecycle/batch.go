package lifecycle

import (
	"context"
	"time"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/tracing"
)

// CreateMany creates a batch of events, each validated and written as
// Create would (the same validation, history entry, first occurrences and
// wake-up), with per-item results in input order ([]events.BatchResult is
// what o.Render receives). Valid items are written even when others fail;
// each written item is whole. The batch is one transaction, its
// idempotency record included: a replay after a crash either finds the
// whole batch or nothing of it. Events without calendars or an endpoint —
// the common case — go in a few multi-row statements; the others take the
// single create's path, each in a savepoint so that one refused item
// leaves the rest standing.
func (s *Service) CreateMany(ctx context.Context, p auth.Principal, via string, b events.Batch, o events.Once) (events.Answer, error) {
	now := s.now()
	if o.Key != "" {
		// A replay (an import resumed) answers before a thousand events are
		// validated again for nothing.
		if rec, err := s.store.GetIdempotency(ctx, o.Principal, o.Key, now); err == nil {
			return replayed(rec, o.RequestHash)
		}
	}
	results := make([]events.BatchResult, len(b.Items))
	var valid []batchEvent
	for i, it := range b.Items {
		if it.Err != nil {
			results[i].Err = it.Err
			continue
		}
		nc, err := s.prepareCreate(ctx, p, via, it.Input, now)
		if err != nil {
			if !b.ItemFault(err) {
				return events.Answer{}, err
			}
			results[i].Err = err
			continue
		}
		valid = append(valid, batchEvent{index: i, nc: nc})
	}
	ans, err := s.once(ctx, o, func(store *repository.Store) (any, error) {
		err := store.WithTx(ctx, func(tx *repository.Store) error {
			return s.writeBatch(ctx, tx, p, valid, results, b.ItemFault, now)
		})
		return results, err
	})
	if err != nil || ans.Replayed {
		return ans, err
	}
	var first *time.Time
	for _, r := range results {
		if r.Event != nil && r.Event.NextRunAt != nil && (first == nil || r.Event.NextRunAt.Before(*first)) {
			first = r.Event.NextRunAt
		}
	}
	// The earliest instant is enough: a dispatcher woken for it claims
	// every row due by then and sleeps until the next one.
	s.wake(ctx, first)
	return ans, nil
}

// batchEvent is a validated item of a batch and its index in the input.
type batchEvent struct {
	index int
	nc    *newEvent
}

// writeBatch writes the validated items inside tx and fills in their
// results.
func (s *Service) writeBatch(ctx context.Context, tx *repository.Store, p auth.Principal, valid []batchEvent,
	results []events.BatchResult, fault func(error) bool, now time.Time) error {
	bulk := make([]repository.NewEvent, 0, len(valid))
	written := make([]int, 0, len(valid))
	for _, it := range valid {
		nc := it.nc
		if nc.needsTx() {
			err := tx.Savepoint(ctx, func(sp *repository.Store) error { return s.createHeld(ctx, sp, p, nc, now) })
			if err != nil {
				if !fault(err) {
					return err
				}
				results[it.index].Err = err
				continue
			}
			results[it.index].Event = &nc.ev
			continue
		}
		ne := repository.NewEvent{Event: &nc.ev, History: nc.created}
		if nc.ev.Status == model.EventActive {
			_, span := tracing.StartPlan(ctx, nc.ev.ID)
			rows, err := s.firstWindow(ctx, tx, &nc.ev, nc.rule, now)
			tracing.EndPlan(span, len(rows), nc.ev.NextRunAt, err)
			if err != nil {
				if !fault(err) {
					return err
				}
				results[it.index].Err = err
				continue
			}
			ne.First = rows
		}
		bulk = append(bulk, ne)
		written = append(written, it.index)
	}
	if err := tx.CreateEvents(ctx, bulk); err != nil {
		return err
	}
	for k, i := range written {
		results[i].Event = bulk[k].Event
	}
	return nil
}
