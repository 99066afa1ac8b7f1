package repository

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// requeue is the one update that turns a terminal occurrence into an
// operator's re-delivery: pending and due now, marked manual_retry so that
// the dispatcher records the next attempt as manual (with the same delivery
// id, the occurrence id) and lets it past the retry limit. It is pending,
// not retrying: nothing has failed in this delivery yet (a completed
// occurrence may be re-sent too). error_message describes the current state
// only, so the old error is cleared; it stays in the attempts. status_code
// and response_body remain the last attempt's answer until the next one. A
// callback event's run report is cleared: the re-delivery starts a new run.
// The rows leave their finished status: the statistics uncount them.
func (s *Store) requeue(ctx context.Context, ids []string, now time.Time) (int, error) {
	rows, err := s.updateOccurrences(ctx, `status = `+quote(string(model.OccurrencePending))+`,
		next_attempt_at = ?, manual_retry = ?, error_message = NULL, completed_at = NULL, lease_token = NULL,
		lease_owner = NULL, lease_expires_at = NULL, updated_at = ?, run_status = NULL, run_output = NULL,
		run_reported_at = NULL, heartbeat_at = NULL`, []any{s.ts(now), true, s.ts(now)},
		statusSQL(`status IN {finished} AND id IN (`)+placeholders(len(ids))+`)`, stringArgs(ids))
	return len(rows), err
}

// RetryOccurrence re-queues one terminal occurrence for delivery at now. It
// answers ErrNotFound for an unknown id and model.ErrNotRetryable when the
// occurrence is not terminal. Scope is the caller's business (the API checks
// the event first).
func (s *Store) RetryOccurrence(ctx context.Context, id string, now time.Time) (model.Occurrence, error) {
	var out model.Occurrence
	err := s.WithTx(ctx, func(tx *Store) error {
		n, err := tx.requeue(ctx, []string{id}, now)
		if err != nil || n == 0 {
			return err
		}
		out, err = tx.GetOccurrence(ctx, id)
		return err
	})
	if err != nil {
		return model.Occurrence{}, fmt.Errorf("retry occurrence: %w", err)
	}
	if out.ID != "" {
		return out, nil
	}
	if _, err := s.GetOccurrence(ctx, id); err != nil {
		if errors.Is(err, model.ErrNotFound) {
			return model.Occurrence{}, model.ErrNotFound
		}
		return model.Occurrence{}, fmt.Errorf("retry occurrence: %w", err)
	}
	return model.Occurrence{}, model.ErrNotRetryable
}

// RetryOccurrences re-queues every match up to f.Limit, f.BatchSize rows per
// transaction (PostgreSQL: FOR UPDATE SKIP LOCKED, so an archiver or another
// bulk retry running at once never sees the same rows). LimitReached is set
// when the limit stopped it while matches remain.
func (s *Store) RetryOccurrences(ctx context.Context, f model.RetryFilter, now time.Time) (model.RetryResult, error) {
	for _, st := range f.Status {
		if !st.Terminal() {
			return model.RetryResult{}, fmt.Errorf("retry occurrences: status %q is not terminal", st)
		}
	}
	if len(f.Status) == 0 {
		f.Status = []model.OccurrenceStatus{model.OccurrenceFailed}
	}
	batch := f.BatchSize
	if batch <= 0 {
		batch = 500
	}
	where, args, ok := s.retryWhere(f)
	if !ok {
		return model.RetryResult{}, nil
	}
	pick := `SELECT o.id FROM ` + occurrencesHolding(f.Status) + ` o WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY o.scheduled_at, o.id LIMIT ?`
	var res model.RetryResult
	for res.Requeued < f.Limit {
		n := min(batch, f.Limit-res.Requeued)
		var moved int
		err := s.WithTx(ctx, func(tx *Store) error {
			var ids []string
			if err := tx.selectAll(ctx, &ids, pick+tx.d.skipLocked, withArg(args, n)...); err != nil {
				return fmt.Errorf("pick occurrences to retry: %w", err)
			}
			if len(ids) == 0 {
				return nil
			}
			var err error
			if moved, err = tx.requeue(ctx, ids, now); err != nil {
				return fmt.Errorf("retry occurrences: %w", err)
			}
			return nil
		})
		if err != nil {
			return res, err
		}
		res.Requeued += moved
		if moved == 0 {
			return res, nil
		}
	}
	var more []string
	if err := s.selectAll(ctx, &more, pick, withArg(args, 1)...); err != nil {
		return res, fmt.Errorf("look for more occurrences to retry: %w", err)
	}
	res.LimitReached = len(more) > 0
	return res, nil
}

func (s *Store) retryWhere(f model.RetryFilter) (where []string, args []any, ok bool) {
	base := model.OccurrenceFilter{EventID: f.EventID, Status: f.Status, From: f.From, To: f.To, AnyTags: f.AnyTags,
		StatusCode: f.StatusCode, Unrestricted: true}
	where, args, _ = s.occurrenceWhere(base)
	where = append(where, `EXISTS (SELECT 1 FROM events e WHERE e.id = o.event_id AND e.deleted_at IS NULL)`)
	if !f.Unrestricted {
		if len(f.Scope) == 0 {
			return nil, nil, false
		}
		where = append(where, `EXISTS (SELECT 1 FROM event_tags t WHERE t.event_id = o.event_id)`,
			`NOT EXISTS (SELECT 1 FROM event_tags t WHERE t.event_id = o.event_id AND t.tag NOT IN (`+
				placeholders(len(f.Scope))+`))`)
		args = append(args, stringArgs(f.Scope)...)
	}
	return where, args, true
}

// ReplayFanout re-queues a finished fan-out occurrence as requeue does,
// with its new fan-out document (the deliveries to make again), provided
// the document is still the one read (was): a concurrent replay or round
// makes it model.ErrNotRetryable.
func (s *Store) ReplayFanout(ctx context.Context, id string, was, doc *string, now time.Time) (model.Occurrence, error) {
	var out model.Occurrence
	err := s.WithTx(ctx, func(tx *Store) error {
		if was == nil {
			return model.ErrNotRetryable
		}
		res, err := tx.exec(ctx, `UPDATE occurrences SET fanout_json = ? WHERE id = ? AND fanout_json = ?`, *doc, id, *was)
		if err != nil {
			return fmt.Errorf("replay fan-out: %w", err)
		}
		if affected(res) != 1 {
			return model.ErrNotRetryable
		}
		n, err := tx.requeue(ctx, []string{id}, now)
		if err != nil {
			return fmt.Errorf("replay fan-out: %w", err)
		}
		if n != 1 {
			return model.ErrNotRetryable
		}
		out, err = tx.GetOccurrence(ctx, id)
		return err
	})
	return out, err
}
