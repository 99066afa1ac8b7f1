package repository_test

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

func newCalendar(at time.Time, tags ...string) *model.Calendar {
	if tags == nil {
		tags = []string{}
	}
	return &model.Calendar{ID: uuid.NewString(), Name: "holidays", Timezone: "Europe/Prague",
		Dates: []string{"2031-12-25"}, Ranges: []model.DateRange{{From: "2031-07-01", To: "2031-07-14"}},
		RRules: []string{"FREQ=WEEKLY;BYDAY=SA,SU"}, Tags: tags, Version: 1, CreatedBy: "alice",
		CreatedAt: at, UpdatedAt: at}
}

func mustCreateCalendar(t *testing.T, s *repository.Store, c *model.Calendar) {
	t.Helper()
	require.NoError(t, s.CreateCalendar(context.Background(), c))
}

func TestCalendarRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		c := newCalendar(t0, "team-a", "eu")
		mustCreateCalendar(t, s, c)
		got, err := s.GetCalendar(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, *c, got)

		empty := &model.Calendar{ID: uuid.NewString(), Name: "none", Timezone: "UTC", Version: 1,
			CreatedAt: t0, UpdatedAt: t0}
		mustCreateCalendar(t, s, empty)
		got, err = s.GetCalendar(ctx, empty.ID)
		require.NoError(t, err)
		if got.Dates == nil || got.Ranges == nil || got.RRules == nil || got.Tags == nil {
			t.Errorf("empty lists read back as nil: %+v", got)
		}

		for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
			if _, err := s.GetCalendar(ctx, id); !errors.Is(err, model.ErrNotFound) {
				t.Errorf("GetCalendar(%q) error = %v, want model.ErrNotFound", id, err)
			}
		}
		found, err := s.GetCalendars(ctx, []string{c.ID, "not-a-uuid", uuid.NewString(), empty.ID, c.ID})
		require.NoError(t, err)
		var ids []string
		for _, f := range found {
			ids = append(ids, f.ID)
		}
		require.ElementsMatch(t, []string{c.ID, empty.ID}, ids)
	})
}

func TestListCalendarsScopesAndPaginates(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		a := newCalendar(t0, "team-a")
		ab := newCalendar(t0.Add(time.Second), "team-a", "team-b")
		b := newCalendar(t0.Add(2*time.Second), "team-b")
		none := newCalendar(t0.Add(3 * time.Second))
		for _, c := range []*model.Calendar{a, ab, b, none} {
			mustCreateCalendar(t, s, c)
		}
		list := func(f model.CalendarFilter) []string {
			t.Helper()
			got, err := s.ListCalendars(ctx, f)
			require.NoError(t, err)
			ids := []string{}
			for _, c := range got {
				ids = append(ids, c.ID)
			}
			return ids
		}
		require.Equal(t, []string{none.ID, b.ID, ab.ID, a.ID}, list(model.CalendarFilter{Unrestricted: true}))
		require.Equal(t, []string{ab.ID, a.ID}, list(model.CalendarFilter{Scope: []string{"team-a"}}))
		require.Empty(t, list(model.CalendarFilter{Scope: []string{}}))
		require.Equal(t, []string{b.ID, ab.ID}, list(model.CalendarFilter{Unrestricted: true, AnyTags: []string{"team-b"}}))
		require.Equal(t, []string{ab.ID}, list(model.CalendarFilter{Unrestricted: true,
			AllTags: []string{"team-a", "team-b", "team-a"}}))
		require.Equal(t, []string{ab.ID}, list(model.CalendarFilter{Scope: []string{"team-b"}, AnyTags: []string{"team-a"}}))

		page1 := list(model.CalendarFilter{Unrestricted: true, Limit: 3})
		require.Equal(t, []string{none.ID, b.ID, ab.ID}, page1)
		page2 := list(model.CalendarFilter{Unrestricted: true, Limit: 3,
			After: &model.CalendarCursor{CreatedAt: ab.CreatedAt, ID: ab.ID}})
		require.Equal(t, []string{a.ID}, page2)
	})
}

func TestUpdateCalendarIsVersionFenced(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		c := newCalendar(t0, "team-a")
		mustCreateCalendar(t, s, c)
		edit := *c
		edit.Name, edit.Dates, edit.Tags, edit.UpdatedAt = "renamed", []string{"2032-01-01"}, []string{"team-b"}, t0.Add(time.Hour)
		require.NoError(t, s.UpdateCalendar(ctx, &edit, 1))
		require.Equal(t, int64(2), edit.Version)
		got, err := s.GetCalendar(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, edit, got)

		stale := *c
		if err := s.UpdateCalendar(ctx, &stale, 1); !errors.Is(err, model.ErrStaleVersion) {
			t.Errorf("update at version 1 after an edit: error %v, want model.ErrStaleVersion", err)
		}
		gone := newCalendar(t0)
		if err := s.UpdateCalendar(ctx, gone, 1); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("update of an unknown calendar: error %v, want model.ErrNotFound", err)
		}
	})
}

func TestCalendarInUseCannotBeDeleted(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		c := newCalendar(t0)
		mustCreateCalendar(t, s, c)
		e1, e2 := newEvent(), newEvent()
		mustCreate(t, s, e1)
		mustCreate(t, s, e2)
		require.NoError(t, s.ReplaceEventCalendars(ctx, e1.ID, []string{c.ID}))
		require.NoError(t, s.ReplaceEventCalendars(ctx, e2.ID, []string{c.ID, c.ID}))

		err := s.DeleteCalendar(ctx, c.ID, 0)
		var inUse *repository.InUseError
		require.ErrorAs(t, err, &inUse)
		require.Equal(t, 2, inUse.Events)
		require.ErrorIs(t, err, model.ErrConflict)

		// An event that drops the calendar, and one that is deleted, no
		// longer hold it.
		require.NoError(t, s.ReplaceEventCalendars(ctx, e1.ID, nil))
		softDelete(t, s, e2.ID, t0)
		if err := s.DeleteCalendar(ctx, c.ID, 7); !errors.Is(err, model.ErrStaleVersion) {
			t.Errorf("delete at a wrong version: error %v, want model.ErrStaleVersion", err)
		}
		require.NoError(t, s.DeleteCalendar(ctx, c.ID, 1))
		if _, err := s.GetCalendar(ctx, c.ID); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("calendar still there after delete: %v", err)
		}
		if err := s.DeleteCalendar(ctx, c.ID, 0); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("second delete: error %v, want model.ErrNotFound", err)
		}
	})
}

func TestReplaceEventCalendarsRefusesUnknownCalendars(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		c := newCalendar(t0)
		mustCreateCalendar(t, s, c)
		e := newEvent()
		mustCreate(t, s, e)
		require.NoError(t, s.ReplaceEventCalendars(ctx, e.ID, []string{c.ID}))
		for _, bad := range []string{uuid.NewString(), "not-a-uuid"} {
			err := s.ReplaceEventCalendars(ctx, e.ID, []string{c.ID, bad})
			var unknown *repository.UnknownCalendarError
			require.ErrorAs(t, err, &unknown)
			require.Equal(t, bad, unknown.ID)
			require.ErrorIs(t, err, model.ErrNotFound)
		}
		// A refused replace inside a transaction leaves the old rows.
		_ = s.WithTx(ctx, func(tx *repository.Store) error {
			return tx.ReplaceEventCalendars(ctx, e.ID, []string{uuid.NewString()})
		})
		ids, err := s.EventsUsingCalendar(ctx, c.ID, "", 10)
		require.NoError(t, err)
		require.Equal(t, []string{e.ID}, ids)
	})
}

func TestEventsUsingCalendarPagesLiveEvents(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		c, other := newCalendar(t0), newCalendar(t0)
		mustCreateCalendar(t, s, c)
		mustCreateCalendar(t, s, other)
		var live []string
		for i := range 5 {
			e := newEvent()
			mustCreate(t, s, e)
			require.NoError(t, s.ReplaceEventCalendars(ctx, e.ID, []string{other.ID, c.ID}))
			if i == 2 {
				softDelete(t, s, e.ID, t0)
				continue
			}
			live = append(live, e.ID)
		}
		sort.Strings(live)
		var got []string
		after := ""
		for range 10 {
			page, err := s.EventsUsingCalendar(ctx, c.ID, after, 3)
			require.NoError(t, err)
			got = append(got, page...)
			if len(page) < 3 {
				break
			}
			after = page[len(page)-1]
		}
		require.Equal(t, live, got)
		n, err := s.CalendarUsers(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, 4, n)
	})
}

func TestReplanRequests(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		c1, c2 := newCalendar(t0), newCalendar(t0)
		mustCreateCalendar(t, s, c1)
		mustCreateCalendar(t, s, c2)
		first := t0.Add(time.Minute + 123456789) // sub-microsecond digits are dropped
		require.NoError(t, s.RequestReplan(ctx, c2.ID, first))
		require.NoError(t, s.RequestReplan(ctx, c1.ID, first.Add(time.Second)))
		if err := s.RequestReplan(ctx, uuid.NewString(), first); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("re-plan of an unknown calendar: error %v, want model.ErrNotFound", err)
		}
		reqs, err := s.CalendarsToReplan(ctx, 10)
		require.NoError(t, err)
		require.Len(t, reqs, 2)
		require.Equal(t, c2.ID, reqs[0].CalendarID, "oldest request first")
		require.True(t, reqs[0].RequestedAt.Equal(first.Truncate(time.Microsecond)), "requested at %v", reqs[0].RequestedAt)
		got, err := s.GetCalendar(ctx, c2.ID)
		require.NoError(t, err)
		require.NotNil(t, got.ReplanRequestedAt)

		// Edited again while the re-plan ran: finishing the old request
		// leaves the new one.
		require.NoError(t, s.RequestReplan(ctx, c2.ID, first.Add(time.Hour)))
		done, err := s.FinishReplan(ctx, c2.ID, reqs[0].RequestedAt)
		require.NoError(t, err)
		require.False(t, done)
		n, err := s.PendingReplans(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, n)

		reqs, err = s.CalendarsToReplan(ctx, 1)
		require.NoError(t, err)
		require.Len(t, reqs, 1)
		require.Equal(t, c1.ID, reqs[0].CalendarID)
		done, err = s.FinishReplan(ctx, c1.ID, reqs[0].RequestedAt)
		require.NoError(t, err)
		require.True(t, done)
		n, err = s.PendingReplans(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		got, err = s.GetCalendar(ctx, c1.ID)
		require.NoError(t, err)
		require.Nil(t, got.ReplanRequestedAt)
	})
}
