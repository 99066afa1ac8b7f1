package repository

import (
	"context"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// ArchiveBatch is one bounded step of the archiver: at most Limit rows older
// than Cutoff are moved to the archive tables (or deleted when Delete is set,
// i.e. archival.enabled=false), stamped archived_at = Now.
type ArchiveBatch struct {
	Cutoff time.Time
	Now    time.Time
	Limit  int
	Delete bool
}

// ArchiveCounts is how many rows one step moved (or deleted, or purged).
type ArchiveCounts struct {
	Events      int `json:"events"`
	Occurrences int `json:"occurrences"`
	Attempts    int `json:"attempts"`
}

// Add sums two counts.
func (c ArchiveCounts) Add(o ArchiveCounts) ArchiveCounts {
	return ArchiveCounts{Events: c.Events + o.Events, Occurrences: c.Occurrences + o.Occurrences,
		Attempts: c.Attempts + o.Attempts}
}

// Total is the number of rows of every kind.
func (c ArchiveCounts) Total() int { return c.Events + c.Occurrences + c.Attempts }

// The batch pick of ArchiveOccurrences. "Older than retention" is
// completed_at, or updated_at when completed_at is NULL; an occurrence whose
// instant is still ahead (a cancelled future row that a resume could
// reinstate) is never touched, nor is anything pending, retrying, leased or
// awaiting an acknowledgement.
var pickArchivableOccurrences = statusSQL(`SELECT id FROM occurrences
	WHERE status IN {finished}
	AND COALESCE(completed_at, updated_at) < ? AND scheduled_at < ?
	LIMIT ?`)

// ArchiveOccurrences moves one batch of terminal occurrences past retention,
// with their attempts, to the archive tables in one transaction (or deletes
// them when b.Delete). The move is idempotent: it is keyed on live rows that
// the transaction holds locked, so running it again, or twice at once, moves
// nothing twice. On PostgreSQL whole weekly slices move instead
// (archiveSlices); then SQLite gives the freed pages back to the file
// system when it deleted.
func (s *Store) ArchiveOccurrences(ctx context.Context, b ArchiveBatch) (ArchiveCounts, error) {
	if s.Partitioned() {
		return s.archiveSlices(ctx, b)
	}
	out, err := s.archiveRows(ctx, b, pickArchivableOccurrences)
	if err == nil && b.Delete && out.Total() > 0 {
		err = s.incrementalVacuum(ctx)
	}
	return out, err
}

// archiveRows moves the rows pick selects (its parameters: cutoff, now,
// limit) with their attempts.
func (s *Store) archiveRows(ctx context.Context, b ArchiveBatch, pick string) (ArchiveCounts, error) {
	var out ArchiveCounts
	err := s.WithTx(ctx, func(tx *Store) error {
		var ids []string
		err := tx.selectAll(ctx, &ids, pick+tx.d.skipLocked,
			tx.ts(b.Cutoff), tx.ts(b.Now), b.Limit)
		if err != nil {
			return fmt.Errorf("pick archivable occurrences: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		in := placeholders(len(ids))
		idArgs := stringArgs(ids)
		if !b.Delete {
			q := `INSERT INTO attempts_archive (` + attemptColumns + `, archived_at) SELECT ` + attemptColumns +
				`, ? FROM attempts WHERE occurrence_id IN (` + in + `)`
			if _, err := tx.exec(ctx, q, append([]any{tx.ts(b.Now)}, idArgs...)...); err != nil {
				return fmt.Errorf("archive attempts: %w", err)
			}
		}
		res, err := tx.exec(ctx, `DELETE FROM attempts WHERE occurrence_id IN (`+in+`)`, idArgs...)
		if err != nil {
			return fmt.Errorf("delete archived attempts: %w", err)
		}
		out.Attempts = affected(res)
		if !b.Delete {
			q := `INSERT INTO occurrences_archive (` + occurrenceColumns + `, archived_at) SELECT ` +
				occurrenceColumns + `, ? FROM occurrences WHERE id IN (` + in + `)`
			if _, err := tx.exec(ctx, q, append([]any{tx.ts(b.Now)}, idArgs...)...); err != nil {
				return fmt.Errorf("archive occurrences: %w", err)
			}
		}
		res, err = tx.exec(ctx, `DELETE FROM occurrences WHERE id IN (`+in+`)`, idArgs...)
		if err != nil {
			return fmt.Errorf("delete archived occurrences: %w", err)
		}
		out.Occurrences = affected(res)
		return nil
	})
	if err != nil {
		return ArchiveCounts{}, err
	}
	return out, nil
}

// The batch pick of ArchiveEvents: deleted or finished events whose last
// change is past retention and that have no live occurrence left at all
// (ArchiveOccurrences runs first and takes the old terminal ones; anything
// still there is recent or can still fire, which keeps the event). A
// one-time event whose end was never written (EventEnds) is finished too:
// with its occurrences archived, it ended before retention.
var pickArchivableEvents = statusSQL(`SELECT e.id FROM events e
	WHERE (e.status IN ({inactive}, {deleted}) OR ` + oneTimeEndedSQL + `)
	AND COALESCE(e.deleted_at, e.updated_at) < ?
	AND NOT EXISTS (SELECT 1 FROM occurrences o WHERE o.event_id = e.id)
	LIMIT ?`)

// ArchiveEvents moves one batch of finished or deleted events past retention
// to events_archive (their tags travel in tags_json) with their exceptions
// and history, and removes their event_tags rows, in one transaction; with
// b.Delete they are only deleted.
func (s *Store) ArchiveEvents(ctx context.Context, b ArchiveBatch) (ArchiveCounts, error) {
	var out ArchiveCounts
	err := s.WithTx(ctx, func(tx *Store) error {
		var ids []string
		if err := tx.selectAll(ctx, &ids, pickArchivableEvents+tx.d.skipLocked, tx.ts(model.SeriesEnd),
			tx.ts(b.Cutoff), b.Limit); err != nil {
			return fmt.Errorf("pick archivable events: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		in := placeholders(len(ids))
		idArgs := stringArgs(ids)
		if !b.Delete {
			if err := tx.writeArchivedEnds(ctx, ids, b.Now); err != nil {
				return err
			}
			q := `INSERT INTO events_archive (` + eventColumns + `, archived_at) SELECT ` + eventColumns +
				`, ? FROM events WHERE id IN (` + in + `)`
			if _, err := tx.exec(ctx, q, append([]any{tx.ts(b.Now)}, idArgs...)...); err != nil {
				return fmt.Errorf("archive events: %w", err)
			}
		}
		if _, err := tx.exec(ctx, `DELETE FROM event_tags WHERE event_id IN (`+in+`)`, idArgs...); err != nil {
			return fmt.Errorf("delete archived event tags: %w", err)
		}
		// The event's exceptions (they reference it) and its history go
		// with it.
		for _, t := range eventSideTables {
			if !b.Delete {
				q := `INSERT INTO ` + t.table + `_archive (` + t.columns + `, archived_at) SELECT ` + t.columns +
					`, ? FROM ` + t.table + ` WHERE event_id IN (` + in + `)`
				if _, err := tx.exec(ctx, q, append([]any{tx.ts(b.Now)}, idArgs...)...); err != nil {
					return fmt.Errorf("archive %s: %w", t.table, err)
				}
			}
			if _, err := tx.exec(ctx, `DELETE FROM `+t.table+` WHERE event_id IN (`+in+`)`, idArgs...); err != nil {
				return fmt.Errorf("delete archived %s: %w", t.table, err)
			}
		}
		res, err := tx.exec(ctx, `DELETE FROM events WHERE id IN (`+in+`)`, idArgs...)
		if err != nil {
			return fmt.Errorf("delete archived events: %w", err)
		}
		out.Events = affected(res)
		return nil
	})
	if err != nil {
		return ArchiveCounts{}, err
	}
	return out, nil
}

// writeArchivedEnds writes into the events of ids that ended one-time
// without it written the end their reads derived (EventEnds), from their
// occurrences and attempts already in the archive, so that the archived
// row reads the same.
func (s *Store) writeArchivedEnds(ctx context.Context, ids []string, now time.Time) error {
	var ended []string
	err := s.selectAll(ctx, &ended, `SELECT e.id FROM events e WHERE e.id IN (`+placeholders(len(ids))+`)
		AND `+oneTimeEndedSQL, append(stringArgs(ids), s.ts(model.SeriesEnd))...)
	if err != nil {
		return fmt.Errorf("find unwritten ends: %w", err)
	}
	if len(ended) == 0 {
		return nil
	}
	runs, err := s.scheduledRuns(ctx, ended, "_archive")
	if err != nil {
		return err
	}
	list := make([]EventRun, 0, len(ended))
	for _, id := range ended {
		run, ok := runs[id]
		if !ok {
			run = EventRun{EventID: id, Now: now}
		}
		list = append(list, run)
	}
	return s.NoteEventRuns(ctx, list)
}

// eventSideTables are kept with their event and archived with it.
var eventSideTables = []struct{ table, columns string }{
	{"event_exceptions", exceptionColumns},
	{"event_history", historyColumns},
}

// GetArchivedEvent returns an event the archiver moved to events_archive.
func (s *Store) GetArchivedEvent(ctx context.Context, id string) (model.Event, error) {
	var r eventRow
	if err := s.get(ctx, &r, `SELECT `+eventColumns+` FROM events_archive WHERE id = ?`, id); err != nil {
		return model.Event{}, fmt.Errorf("get archived event: %w", err)
	}
	return r.event()
}

// PurgeArchive deletes, in one transaction, at most limit rows of each
// archive table archived before cutoff (archival.purge_after). An archived
// event goes only once none of its archived occurrences remain, so archived
// history never loses the tags that scope it; its archived exceptions and
// audit history go with it. On PostgreSQL archive slices archived wholly
// before the cutoff are dropped instead (purgeSlices), which gives their
// disk back at once; SQLite returns the freed pages to the file system
// with an incremental vacuum after the purge.
func (s *Store) PurgeArchive(ctx context.Context, cutoff time.Time, limit int) (ArchiveCounts, error) {
	if s.Partitioned() {
		out, err := s.purgeSlices(ctx, cutoff, limit)
		if err != nil {
			return out, err
		}
		err = s.WithTx(ctx, func(tx *Store) error {
			var err error
			out.Events, err = tx.purgeEvents(ctx, cutoff, limit)
			return err
		})
		return out, err
	}
	out, err := s.purgeRows(ctx, cutoff, limit)
	if err == nil && out.Total() > 0 {
		err = s.incrementalVacuum(ctx)
	}
	return out, err
}

// incrementalVacuum returns SQLite's free pages to the file system (the
// database runs with auto_vacuum=INCREMENTAL, see OpenSQLite); without it
// a purge only marks pages free inside the file.
func (s *Store) incrementalVacuum(ctx context.Context) error {
	db := s.db
	if s.writer != nil { // a write: in turn with the transactions
		db = s.writer.db
	}
	if _, err := db.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
		return fmt.Errorf("incremental vacuum: %w", s.d.mapErr(err))
	}
	return nil
}

func (s *Store) purgeRows(ctx context.Context, cutoff time.Time, limit int) (ArchiveCounts, error) {
	var out ArchiveCounts
	err := s.WithTx(ctx, func(tx *Store) error {
		var err error
		if out.Attempts, err = tx.purge(ctx, "attempts_archive", "", cutoff, limit); err != nil {
			return err
		}
		if out.Occurrences, err = tx.purge(ctx, "occurrences_archive", "", cutoff, limit); err != nil {
			return err
		}
		out.Events, err = tx.purgeEvents(ctx, cutoff, limit)
		return err
	})
	if err != nil {
		return ArchiveCounts{}, err
	}
	return out, nil
}

// purgeEvents deletes up to limit archived events that no archived
// occurrence needs any more, with their archived exceptions and history.
func (s *Store) purgeEvents(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	var ids []string
	err := s.selectAll(ctx, &ids, `SELECT id FROM events_archive WHERE archived_at < ?
		AND NOT EXISTS (SELECT 1 FROM occurrences_archive o WHERE o.event_id = events_archive.id) LIMIT ?`,
		s.ts(cutoff), limit)
	if err != nil {
		return 0, fmt.Errorf("pick purgeable events: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	in, idArgs := placeholders(len(ids)), stringArgs(ids)
	for _, t := range eventSideTables {
		if _, err := s.exec(ctx, `DELETE FROM `+t.table+`_archive WHERE event_id IN (`+in+`)`, idArgs...); err != nil {
			return 0, fmt.Errorf("purge %s_archive: %w", t.table, err)
		}
	}
	res, err := s.exec(ctx, `DELETE FROM events_archive WHERE id IN (`+in+`)`, idArgs...)
	if err != nil {
		return 0, fmt.Errorf("purge events_archive: %w", err)
	}
	return affected(res), nil
}

// purge deletes up to limit rows of an archive table by physical row id (the
// archive tables have no key): ctid on PostgreSQL, rowid on SQLite, so each
// batch is an index range scan on archived_at plus direct row deletes.
func (s *Store) purge(ctx context.Context, table, extra string, cutoff time.Time, limit int) (int, error) {
	pick := `SELECT ` + s.d.rowID + ` FROM ` + table + ` WHERE archived_at < ?` + extra + ` LIMIT ?`
	q := `DELETE FROM ` + table + ` WHERE ` + s.d.inPick(s.d.rowID, pick)
	res, err := s.exec(ctx, q, s.ts(cutoff), limit)
	if err != nil {
		return 0, fmt.Errorf("purge %s: %w", table, err)
	}
	return affected(res), nil
}

// ListArchivedOccurrences lists archived occurrences in f.Order with the
// same filters as ListOccurrences. Tag filters and the scope apply to the
// owning event's tags: event_tags while the event is live, tags_json of
// events_archive once it is archived too.
func (s *Store) ListArchivedOccurrences(ctx context.Context, f model.OccurrenceFilter) ([]model.ArchivedOccurrence, error) {
	where, args, ok := s.archivedOccurrenceWhere(f)
	if !ok {
		return []model.ArchivedOccurrence{}, nil
	}
	out, err := listOccurrenceRows[model.ArchivedOccurrence](ctx, s, "occurrences_archive",
		prefixed("o.", occurrenceColumns)+", o.archived_at", where, args, f)
	if err != nil {
		return nil, fmt.Errorf("list archived occurrences: %w", err)
	}
	for i := range out {
		normalize(&out[i].Occurrence)
		out[i].ArchivedAt = utc(out[i].ArchivedAt)
	}
	if out == nil {
		out = []model.ArchivedOccurrence{}
	}
	return out, nil
}

// CountArchivedOccurrences counts what ListArchivedOccurrences would return
// without paging.
func (s *Store) CountArchivedOccurrences(ctx context.Context, f model.OccurrenceFilter) (int, error) {
	where, args, ok := s.archivedOccurrenceWhere(f)
	if !ok {
		return 0, nil
	}
	var n int
	q, args := boundedCount("occurrences_archive", where, args, f.CountBound)
	if err := s.get(ctx, &n, q, args...); err != nil {
		return 0, fmt.Errorf("count archived occurrences: %w", err)
	}
	return n, nil
}

// ListArchivedAttempts returns the archived attempts of one occurrence.
func (s *Store) ListArchivedAttempts(ctx context.Context, occurrenceID string) ([]model.Attempt, error) {
	return s.attemptsIn(ctx, "attempts_archive", occurrenceID)
}

// archivedOccurrenceWhere reuses the live filter for everything but tags and
// scope, then adds tag predicates that look at both homes of an event's tags.
func (s *Store) archivedOccurrenceWhere(f model.OccurrenceFilter) (where []string, args []any, ok bool) {
	base := model.OccurrenceFilter{EventID: f.EventID, Status: f.Status, Reasons: f.Reasons, From: f.From, To: f.To,
		Unrestricted: true}
	where, args, _ = s.occurrenceWhere(base)
	tagAny := func(tags []string) {
		in := placeholders(len(tags))
		where = append(where, `(EXISTS (SELECT 1 FROM event_tags t WHERE t.event_id = o.event_id AND t.tag IN (`+in+
			`)) OR EXISTS (SELECT 1 FROM events_archive ea, `+s.d.jsonStrings("ea.tags_json")+
			` WHERE ea.id = o.event_id AND j.value IN (`+in+`)))`)
		tagArgs := stringArgs(tags)
		args = append(args, tagArgs...)
		args = append(args, tagArgs...)
	}
	if !f.Unrestricted {
		if len(f.Scope) == 0 {
			return nil, nil, false
		}
		tagAny(f.Scope)
	}
	if len(f.AnyTags) > 0 {
		tagAny(f.AnyTags)
	}
	if all := dedupe(f.AllTags); len(all) > 0 {
		in := placeholders(len(all))
		where = append(where, `((SELECT COUNT(*) FROM event_tags t WHERE t.event_id = o.event_id AND t.tag IN (`+in+
			`)) = ? OR (SELECT COUNT(DISTINCT j.value) FROM events_archive ea, `+s.d.jsonStrings("ea.tags_json")+
			` WHERE ea.id = o.event_id AND j.value IN (`+in+`)) = ?)`)
		tagArgs := stringArgs(all)
		args = append(args, tagArgs...)
		args = append(args, len(all))
		args = append(args, tagArgs...)
		args = append(args, len(all))
	}
	return where, args, true
}
