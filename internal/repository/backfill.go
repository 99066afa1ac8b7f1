package repository

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// BackfillCounts is what InsertBackfill wrote.
type BackfillCounts struct {
	Created  int // firing rows, due now
	Skipped  int // rows recorded skipped as planned
	Existing int // instants that already had a row, live or archived
}

// InsertBackfill writes a backfill's rows of an event (the planner's rows of
// a past range, sorted). An instant that already has a row — live, or
// moved to the archive — is left as it is, whatever its state: a backfill
// fills gaps, it does not replay. A new firing row is due at now, with
// reason backfill and manual_retry set, which the dispatcher reads as an
// operator's firing: neither the catch-up window nor the event's catch_up
// miss it, and its lateness counts from now. A new skipped row is recorded
// as planned (its reason, finished now). Call it in a transaction.
func (s *Store) InsertBackfill(ctx context.Context, eventID string, rows []model.Planned, now time.Time) (BackfillCounts, error) {
	var out BackfillCounts
	if len(rows) == 0 {
		return out, nil
	}
	archived, err := s.archivedInstants(ctx, eventID, rows[0].At, rows[len(rows)-1].At)
	if err != nil {
		return out, err
	}
	fresh := make([]model.Planned, 0, len(rows))
	for _, r := range rows {
		if archived[model.RoundUp(r.At).UnixMicro()] {
			out.Existing++
			continue
		}
		fresh = append(fresh, r)
	}
	if err := s.EnsurePartitionsFor(ctx, plannedInstants(fresh), now); err != nil {
		return out, err
	}
	var stats rollupDeltas
	nowArg, due := s.ts(now), s.ts(model.RoundUp(now))
	for start := 0; start < len(fresh); start += insertBatch {
		batch := fresh[start:min(start+insertBatch, len(fresh))]
		var sb strings.Builder
		args := make([]any, 0, len(batch)*14)
		for i, r := range batch {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
			row := s.occurrenceRow(eventID, r, false, nowArg)
			firing := r.Status == model.OccurrencePending
			if firing {
				row[6], row[9] = due, model.ReasonBackfill // next_attempt_at, reason
			}
			args = append(append(args, row...), firing) // manual_retry
		}
		var inserted []changedOccurrence
		if err := s.selectAll(ctx, &inserted, `INSERT INTO occurrences (`+occurrenceInsertColumns+`, manual_retry)
			VALUES `+sb.String()+` ON CONFLICT (event_id, scheduled_at) DO NOTHING
			RETURNING id, event_id, scheduled_at, status, reason`, args...); err != nil {
			return out, fmt.Errorf("insert backfill: %w", err)
		}
		out.Existing += len(batch) - len(inserted)
		for _, o := range inserted {
			stats.finished(eventID, "", o.At.Time, o.Status, o.Reason, 1)
			if o.Status == string(model.OccurrencePending) {
				out.Created++
			} else {
				out.Skipped++
			}
		}
	}
	return out, s.addRollups(ctx, &stats)
}

// archivedInstants are the instants in [from, to] of an event's rows in the
// archive (occurrences_archive_event answers it).
func (s *Store) archivedInstants(ctx context.Context, eventID string, from, to time.Time) (map[int64]bool, error) {
	var rows []struct {
		At rollupInstant `db:"scheduled_at"`
	}
	err := s.selectAll(ctx, &rows, `SELECT scheduled_at FROM occurrences_archive
		WHERE event_id = ? AND scheduled_at >= ? AND scheduled_at <= ?`,
		eventID, s.ts(model.RoundUp(from)), s.ts(model.RoundUp(to)))
	if err != nil {
		return nil, fmt.Errorf("read archived instants: %w", err)
	}
	out := make(map[int64]bool, len(rows))
	for _, r := range rows {
		out[r.At.Time.UnixMicro()] = true
	}
	return out, nil
}
