package repository_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

func historyActions(entries []model.HistoryEntry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Action)
	}
	return out
}

// listAllHistory pages through an event's history two entries at a time,
// the way the API's cursor does.
func listAllHistory(t *testing.T, s *repository.Store, eventID string) []model.HistoryEntry {
	t.Helper()
	var out []model.HistoryEntry
	f := model.HistoryFilter{Limit: 2}
	for range 100 {
		page, err := s.ListHistory(context.Background(), eventID, f)
		require.NoError(t, err)
		out = append(out, page...)
		if len(page) < f.Limit {
			return out
		}
		last := page[len(page)-1]
		f.After = &model.HistoryCursor{At: last.At, ID: last.ID}
	}
	t.Fatal("history paging did not end")
	return nil
}

func TestHistoryAppendsAndListsOldestFirst(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e, other := newEvent("a"), newEvent("b")
		mustCreate(t, s, e)
		mustCreate(t, s, other)
		changes := json.RawMessage(`{"name":{"from":"a","to":"b"}}`)
		at := t0.Add(time.Hour)
		// Written out of order, and three in one microsecond: the list is
		// by instant, then by the order of appending.
		require.NoError(t, s.AppendHistory(ctx,
			model.HistoryEntry{EventID: e.ID, At: at.Add(time.Minute), Subject: "ops", Channel: "cli", Action: "pause",
				Reason: "maintenance"},
			model.HistoryEntry{EventID: e.ID, At: at, Subject: "ops", Action: "create"},
		))
		require.NoError(t, s.AppendHistory(ctx,
			model.HistoryEntry{EventID: e.ID, At: at.Add(time.Minute), Action: "skip"},
			model.HistoryEntry{EventID: e.ID, At: at.Add(time.Minute), Action: "move"},
			model.HistoryEntry{EventID: e.ID, At: at.Add(2 * time.Minute), Subject: "alice", Channel: "console",
				Action: "update", Changes: changes},
			model.HistoryEntry{EventID: other.ID, At: at, Action: "create"},
		))

		got := listAllHistory(t, s, e.ID)
		require.Equal(t, []string{"create", "pause", "skip", "move", "update"}, historyActions(got))
		first, pause, update := got[0], got[1], got[4]
		require.Equal(t, "api", first.Channel, "channel defaults to api")
		require.Equal(t, "ops", first.Subject)
		require.Equal(t, at, first.At)
		require.Equal(t, time.UTC, first.At.Location())
		require.Nil(t, first.Changes)
		require.NoError(t, uuid.Validate(first.ID))
		require.Equal(t, "cli", pause.Channel)
		require.Equal(t, "maintenance", pause.Reason)
		require.Equal(t, "console", update.Channel)
		require.JSONEq(t, string(changes), string(update.Changes))

		one, err := s.ListHistory(ctx, other.ID, model.HistoryFilter{})
		require.NoError(t, err)
		require.Equal(t, []string{"create"}, historyActions(one), "another event's history is its own")
		none, err := s.ListHistory(ctx, uuid.NewString(), model.HistoryFilter{})
		require.NoError(t, err)
		require.Empty(t, none)
		require.NotNil(t, none, "an empty history is an empty list")
	})
}

func TestHistoryRefusesIncompleteEntries(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		id := uuid.NewString()
		for name, e := range map[string]model.HistoryEntry{
			"no event":       {At: t0, Action: "create"},
			"no action":      {EventID: id, At: t0},
			"no instant":     {EventID: id, Action: "create"},
			"changes broken": {EventID: id, At: t0, Action: "update", Changes: json.RawMessage(`{"name":`)},
		} {
			if err := s.AppendHistory(ctx, e); err == nil {
				t.Errorf("%s: AppendHistory accepted %+v", name, e)
			}
		}
		got, err := s.ListHistory(ctx, id, model.HistoryFilter{})
		require.NoError(t, err)
		require.Empty(t, got, "nothing was written")
	})
}

// An archived event's history and exceptions travel with it in one step,
// stay readable, and are purged with it.
func TestHistoryAndExceptionsArchiveWithTheirEvent(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		gone, kept := newEvent("old", "x"), newEvent("new")
		gone.Status = model.EventInactive
		mustCreate(t, s, gone)
		mustCreate(t, s, kept)
		for _, e := range []*model.Event{gone, kept} {
			require.NoError(t, s.AppendHistory(ctx,
				model.HistoryEntry{EventID: e.ID, At: t0, Subject: "ops", Action: "create"},
				model.HistoryEntry{EventID: e.ID, At: t0.Add(time.Minute), Subject: "ops", Action: "exception_added",
					Changes: json.RawMessage(`{"exception":{"from":null,"to":{"action":"skip"}}}`)}))
			require.NoError(t, s.PutException(ctx, model.Exception{EventID: e.ID, At: t0.Add(day),
				Action: model.ExceptionSkip, Reason: "holiday", CreatedBy: "ops", CreatedAt: t0}))
		}
		before := listAllHistory(t, s, gone.ID)
		require.Len(t, before, 2)

		t1 := t0.Add(40 * day)
		got := archiveAll(t, s, repository.ArchiveBatch{Cutoff: t1.Add(-30 * day), Now: t1, Limit: 10})
		require.Equal(t, repository.ArchiveCounts{Events: 1}, got)
		_, err := s.GetEventAny(ctx, gone.ID)
		require.ErrorIs(t, err, model.ErrNotFound, "the event left the live table")

		require.Equal(t, before, listAllHistory(t, s, gone.ID), "archived history reads as it did")
		require.Equal(t, 0, countRows(t, s, `SELECT COUNT(*) FROM event_history WHERE event_id = ?`, gone.ID))
		require.Equal(t, 2, countRows(t, s, `SELECT COUNT(*) FROM event_history_archive WHERE event_id = ?`, gone.ID))
		exceptions, err := s.Exceptions(ctx, gone.ID, time.Time{})
		require.NoError(t, err)
		require.Empty(t, exceptions, "exceptions left the live table")
		require.Equal(t, 1, countRows(t, s, `SELECT COUNT(*) FROM event_exceptions_archive WHERE event_id = ?`, gone.ID))
		archived, err := s.GetArchivedEvent(ctx, gone.ID)
		require.NoError(t, err)
		require.Equal(t, []string{"old", "x"}, archived.Tags, "the archived event keeps the tags that scope it")
		_, err = s.GetArchivedEvent(ctx, kept.ID)
		require.ErrorIs(t, err, model.ErrNotFound)
		_, err = s.GetArchivedEvent(ctx, "not-a-uuid")
		require.ErrorIs(t, err, model.ErrNotFound)

		require.Len(t, listAllHistory(t, s, kept.ID), 2, "a live event's history stays")
		exceptions, err = s.Exceptions(ctx, kept.ID, time.Time{})
		require.NoError(t, err)
		require.Len(t, exceptions, 1)

		// Purged with the event once past purge_after.
		for range 10 {
			n, err := s.PurgeArchive(ctx, t1.Add(time.Second), 1)
			require.NoError(t, err)
			if n.Total() == 0 {
				break
			}
		}
		require.Empty(t, listAllHistory(t, s, gone.ID), "purged with its event")
		require.Equal(t, 0, countRows(t, s, `SELECT COUNT(*) FROM event_exceptions_archive WHERE event_id = ?`, gone.ID))
		require.Len(t, listAllHistory(t, s, kept.ID), 2)
	})
}

func TestHistoryAndExceptionsDeletedWhenArchivingIsOff(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent("old")
		e.Status = model.EventInactive
		mustCreate(t, s, e)
		require.NoError(t, s.AppendHistory(ctx, model.HistoryEntry{EventID: e.ID, At: t0, Action: "create"}))
		require.NoError(t, s.PutException(ctx, model.Exception{EventID: e.ID, At: t0.Add(day),
			Action: model.ExceptionSkip, CreatedAt: t0}))
		t1 := t0.Add(40 * day)
		got := archiveAll(t, s, repository.ArchiveBatch{Cutoff: t1.Add(-30 * day), Now: t1, Limit: 10, Delete: true})
		require.Equal(t, repository.ArchiveCounts{Events: 1}, got)
		require.Empty(t, listAllHistory(t, s, e.ID))
		for _, table := range []string{"event_history", "event_history_archive", "event_exceptions",
			"event_exceptions_archive"} {
			require.Equal(t, 0, countRows(t, s, `SELECT COUNT(*) FROM `+table+` WHERE event_id = ?`, e.ID), table)
		}
	})
}

// countRows runs a COUNT query on the store's pool.
func countRows(t *testing.T, s *repository.Store, q string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, s.DB().GetContext(context.Background(), &n, s.DB().Rebind(q), args...))
	return n
}

// A 410 pauses the event as the scheduler, once: the history says so.
func TestHistoryRecordsTheSchedulersGonePause(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent("a")
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0, t0.Add(time.Second)}, false, t0)
		require.NoError(t, err)
		code := 410
		for i, occ := range claim(t, s, t0.Add(time.Second), 2) {
			now := t0.Add(time.Duration(2+i) * time.Second)
			res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: occ.ID, LeaseToken: "tok",
				Status: model.OccurrenceFailed, StatusCode: &code, Now: now, EventID: e.ID, Ran: true,
				LastStatus: "failed (HTTP 410)", PauseReason: "paused: gone"}})
			require.NoError(t, err)
			require.NoError(t, res[0])
		}
		got := listAllHistory(t, s, e.ID)
		require.Equal(t, []string{"pause"}, historyActions(got), "paused once; the second 410 finds it paused")
		require.Equal(t, "scheduler", got[0].Subject)
		require.Equal(t, "scheduler", got[0].Channel)
		require.Equal(t, "the receiver answered 410 Gone", got[0].Reason)
		require.Equal(t, t0.Add(2*time.Second), got[0].At)
		require.JSONEq(t, `{"status":{"from":"active","to":"paused"}}`, string(got[0].Changes))
	})
}
