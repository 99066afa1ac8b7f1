package calendar_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/lifecycle"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

var _ lifecycle.Calendars = (*calendar.Cache)(nil)

func storedCalendar(t *testing.T, s *repository.Store, dates ...string) *model.Calendar {
	t.Helper()
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &model.Calendar{ID: uuid.NewString(), Name: "c", Timezone: "UTC", Dates: dates, Version: 1,
		CreatedAt: now, UpdatedAt: now}
	require.NoError(t, s.CreateCalendar(context.Background(), c))
	return c
}

func TestCachePlanner(t *testing.T) {
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			s := b.Open(t)
			ctx := context.Background()
			newYear := storedCalendar(t, s, "2031-01-01")
			mayDay := storedCalendar(t, s, "2031-05-01")
			cache := calendar.NewCache(recurrence.Limits{}, 2)

			refs := []model.CalendarRef{{ID: mayDay.ID, Policy: model.CalendarRollForward},
				{ID: newYear.ID, Policy: model.CalendarSkip}}
			got, err := cache.Planner(ctx, s, refs)
			require.NoError(t, err)
			require.Len(t, got, 2)
			require.Equal(t, model.CalendarRollForward, got[0].Policy)
			require.Equal(t, model.CalendarSkip, got[1].Policy)
			require.True(t, got[0].Blocks.Blocks(time.Date(2031, 5, 1, 9, 0, 0, 0, time.UTC)), "first is May Day")
			require.True(t, got[1].Blocks.Blocks(time.Date(2031, 1, 1, 9, 0, 0, 0, time.UTC)), "second is New Year")

			// The same versions come from the cache; an edit compiles anew.
			again, err := cache.Planner(ctx, s, refs[:1])
			require.NoError(t, err)
			require.Same(t, got[0].Blocks, again[0].Blocks)
			edit := *mayDay
			edit.Dates = []string{"2031-05-08"}
			require.NoError(t, s.UpdateCalendar(ctx, &edit, mayDay.Version))
			edited, err := cache.Planner(ctx, s, refs[:1])
			require.NoError(t, err)
			require.NotSame(t, got[0].Blocks, edited[0].Blocks)
			require.False(t, edited[0].Blocks.Blocks(time.Date(2031, 5, 1, 9, 0, 0, 0, time.UTC)), "May Day after the edit")
			require.True(t, edited[0].Blocks.Blocks(time.Date(2031, 5, 8, 9, 0, 0, 0, time.UTC)), "the edited date")

			// Bounded: a third calendar evicts the least recently used.
			third := storedCalendar(t, s)
			_, err = cache.Planner(ctx, s, []model.CalendarRef{{ID: third.ID, Policy: model.CalendarSkip}})
			require.NoError(t, err)
			require.Equal(t, 2, cache.Len())

			missing := uuid.NewString()
			_, err = cache.Planner(ctx, s, []model.CalendarRef{{ID: newYear.ID}, {ID: missing}})
			var inErr *input.Error
			require.True(t, errors.As(err, &inErr), "error %v", err)
			require.Equal(t, http.StatusBadRequest, inErr.Status)
			require.Equal(t, "calendars", inErr.Field)
			require.Equal(t, "calendars: unknown calendar "+missing, inErr.Message)
		})
	}
}
