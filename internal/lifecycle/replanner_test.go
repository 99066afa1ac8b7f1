package lifecycle_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/lifecycle"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/planner"
	"github.com/qhronos/qhronos/internal/recurrence"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

var replanT0 = time.Date(2031, 3, 4, 8, 0, 0, 0, time.UTC)

// replanFixture is a service on a fixed clock, a calendar that blocks
// nothing yet, and daily events honouring it, each planned once.
type replanFixture struct {
	store    *repository.Store
	svc      *lifecycle.Service
	calendar model.Calendar
	events   []string
}

func newReplanFixture(t *testing.T, s *repository.Store, events int) *replanFixture {
	t.Helper()
	ctx := context.Background()
	svc := lifecycle.New(lifecycle.Deps{Store: s, Calendars: calendar.NewCache(recurrence.Limits{}, 0),
		Now: func() time.Time { return replanT0 }},
		lifecycle.Options{Window: planner.Window{CatchUp: time.Hour, Lookahead: 24 * time.Hour, MaxRows: 100}})
	cal := model.Calendar{ID: uuid.NewString(), Name: "closed", Timezone: "UTC", Version: 1,
		CreatedAt: replanT0, UpdatedAt: replanT0}
	require.NoError(t, s.CreateCalendar(ctx, &cal))
	f := &replanFixture{store: s, svc: svc, calendar: cal}
	rule := "FREQ=DAILY"
	for range events {
		ev := &model.Event{ID: uuid.NewString(), Name: "report", StartTime: replanT0.Add(2 * time.Hour),
			Timezone: "UTC", RRule: &rule, Status: model.EventActive, CreatedVia: "api", Version: 1,
			Action:    model.Action{Type: "webhook", Params: json.RawMessage(`{"url":"https://example.com/h"}`)},
			Calendars: []model.CalendarRef{{ID: cal.ID, Policy: model.CalendarSkip}}, Tags: []string{},
			CreatedAt: replanT0, UpdatedAt: replanT0}
		require.NoError(t, s.CreateEvent(ctx, ev))
		require.NoError(t, s.ReplaceEventCalendars(ctx, ev.ID, []string{cal.ID}))
		require.NoError(t, svc.Replan(ctx, ev.ID))
		f.events = append(f.events, ev.ID)
	}
	return f
}

// block makes the calendar block the events' first instant and asks for
// the re-plan, as UpdateCalendar does.
func (f *replanFixture) block(t *testing.T, at time.Time) {
	t.Helper()
	ctx := context.Background()
	edit := f.calendar
	edit.Dates = []string{replanT0.Format(time.DateOnly)}
	require.NoError(t, f.store.UpdateCalendar(ctx, &edit, f.calendar.Version))
	f.calendar = edit
	require.NoError(t, f.store.RequestReplan(ctx, f.calendar.ID, at))
}

// firstRow is the status of an event's row at its first instant.
func (f *replanFixture) firstRow(t *testing.T, eventID string) model.OccurrenceStatus {
	t.Helper()
	at := replanT0.Add(2 * time.Hour)
	end := at.Add(time.Microsecond)
	rows, err := f.store.ListOccurrences(context.Background(), model.OccurrenceFilter{EventID: eventID, From: &at,
		To: &end, Unrestricted: true, Limit: 1})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	return rows[0].Status
}

func TestReplannerWalksEventsInBoundedRuns(t *testing.T) {
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newReplanFixture(t, b.Open(t), 5)
			for _, id := range f.events {
				require.Equal(t, model.OccurrencePending, f.firstRow(t, id))
			}
			f.block(t, replanT0)
			r := lifecycle.NewReplanner(f.svc, lifecycle.ReplannerConfig{EventsPerRun: 2}, lifecycle.ReplannerDeps{})

			var total []lifecycle.ReplanResult
			for range 5 { // bounded: 5 events at 2 a run finish within 3 runs
				res, err := r.RunOnce(ctx)
				require.NoError(t, err)
				total = append(total, res)
				if n, err := f.store.PendingReplans(ctx); err == nil && n == 0 {
					break
				}
			}
			require.Equal(t, []lifecycle.ReplanResult{{Replanned: 2}, {Replanned: 2}, {Replanned: 1, Finished: 1}}, total)
			for _, id := range f.events {
				require.Equal(t, model.OccurrenceSkipped, f.firstRow(t, id), "event %s after the re-plan", id)
			}
			status := r.Status()
			require.Equal(t, int64(5), status["events_replanned"])
			require.Equal(t, true, status["healthy"])
		})
	}
}

func TestReplannerStartsOverWhenTheCalendarChangesAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newReplanFixture(t, repositorytest.SQLite(t), 3)
	f.block(t, replanT0)
	r := lifecycle.NewReplanner(f.svc, lifecycle.ReplannerConfig{EventsPerRun: 2}, lifecycle.ReplannerDeps{})
	res, err := r.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, lifecycle.ReplanResult{Replanned: 2}, res)

	// Edited again mid-walk: the events already done must see the new days
	// too, so the walk starts over and the request stays until it ends.
	require.NoError(t, f.store.RequestReplan(ctx, f.calendar.ID, replanT0.Add(time.Minute)))
	res, err = r.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, lifecycle.ReplanResult{Replanned: 2}, res)
	res, err = r.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, lifecycle.ReplanResult{Replanned: 1, Finished: 1}, res)
	n, err := f.store.PendingReplans(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestReplannerRunsOnlyOnTheLeader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newReplanFixture(t, repositorytest.SQLite(t), 1)
	f.block(t, replanT0)
	locker := coordination.NewLocal(time.Now)
	t.Cleanup(func() { _ = locker.Close() })
	ok, err := locker.TryLock(ctx, "replanner", "other-instance", time.Hour)
	require.NoError(t, err)
	require.True(t, ok)
	r := lifecycle.NewReplanner(f.svc, lifecycle.ReplannerConfig{},
		lifecycle.ReplannerDeps{Locker: locker, Owner: "this-instance"})
	res, err := r.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, lifecycle.ReplanResult{Skipped: true}, res)
	require.Equal(t, model.OccurrencePending, f.firstRow(t, f.events[0]))

	require.NoError(t, locker.Unlock(ctx, "replanner", "other-instance"))
	res, err = r.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, lifecycle.ReplanResult{Replanned: 1, Finished: 1}, res)
	require.Equal(t, model.OccurrenceSkipped, f.firstRow(t, f.events[0]))
}
