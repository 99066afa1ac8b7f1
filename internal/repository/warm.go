package repository

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/qhronos/qhronos/internal/model"
)

// WarmHotPath makes every connection of the keyed pool ready for the hot
// path before work arrives: each runs the dispatcher's statements once, on
// rows that do not exist, in a transaction it rolls back. PostgreSQL plans a
// prepared statement at its first run on a connection, 10–90 ms for the
// outcome statement over the partitioned tables on a busy machine; made in
// the first second of a burst, those plans sat between the first instants
// and their sends (#36: the first second of a steady minute had 1,250–3,700
// sends later than 25 ms). The plans stay with the connections, which the
// keyed pool keeps open (openKeyed), until a change to the tables (a new
// partition, new statistics) has them planned again. The scheduler calls it
// at its start, after making the weeks' partitions. A store without a keyed
// pool (SQLite, a small pool) has nothing to warm.
func (s *Store) WarmHotPath(ctx context.Context) error {
	if s.keyed == nil {
		return nil
	}
	n := s.keyed.Stats().MaxOpenConnections
	// Every connection is held at once, so that each is a different one.
	g, gctx := errgroup.WithContext(ctx)
	for range n {
		g.Go(func() error {
			conn, err := s.keyed.Connx(gctx)
			if err != nil {
				return err
			}
			defer conn.Close()
			tx, err := conn.BeginTxx(gctx, nil)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback() }()
			warm := &Store{db: s.keyed, q: tx, d: s.d, full: s.full, parts: s.parts, conn: conn, keyed: s.keyed,
				byKey: true, asyncOutcomes: s.asyncOutcomes}
			return warm.runHotPath(gctx)
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("warm the hot path's connections: %w", err)
	}
	return nil
}

// runHotPath runs the dispatcher's statements by key once each, in the
// forms a lone instance uses, on an id no row has: nothing matches, and
// the caller rolls back anyway.
func (s *Store) runHotPath(ctx context.Context) error {
	id, now := uuid.NewString(), time.Now().UTC()
	after := &DueKey{At: now, ID: id}
	_, _, err1 := s.ReadDueAndNext(ctx, DueRequest{Until: now, Limit: 1, After: after})
	_, _, err2 := s.ReadDueAndNext(ctx, DueRequest{Until: now, Limit: 1, Skip: []string{id}})
	_, err3 := s.NextDueIn(ctx, nil, nil, after)
	_, err4 := s.NextDueIn(ctx, nil, []string{id}, nil)
	_, err5 := s.CheckDue(ctx, []HeldRow{{ID: id, ScheduledAt: now}})
	_, err6 := s.EventsByID(ctx, []string{id})
	_, err7 := s.RecordOutcomes(ctx, []OutcomeRecord{{OccurrenceID: id, Status: model.OccurrenceCompleted, Now: now,
		EventID: id, ActionType: "webhook", Ran: true, Slot: 0, Epoch: 1,
		Attempt: &model.Attempt{ID: uuid.NewString(), OccurrenceID: id, EventID: id, ScheduledAt: now, Attempt: 1,
			StartedAt: now, Outcome: string(model.OccurrenceCompleted)}}})
	err8 := s.NoteEventRuns(ctx, []EventRun{{EventID: id, Now: now}})
	return errors.Join(err1, err2, err3, err4, err5, err6, err7, err8)
}
