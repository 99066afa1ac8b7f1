package notify_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/notify"
	"github.com/qhronos/qhronos/internal/repository"
)

// missedData is the data of a `missed` webhook notice.
type missedData struct {
	EventID string            `json:"event_id"`
	Title   string            `json:"title"`
	Text    string            `json:"text"`
	Tags    []string          `json:"tags"`
	Fields  map[string]string `json:"fields"`
}

func missedNotices(t *testing.T, r *receiver) []missedData {
	t.Helper()
	var out []missedData
	for _, x := range r.received() {
		require.Equal(t, "missed", x.Payload.Type)
		var d missedData
		require.NoError(t, json.Unmarshal(x.Payload.Data, &d))
		out = append(out, d)
	}
	return out
}

// plan inserts pending rows of ev at t0 plus each offset.
func plan(t *testing.T, s *repository.Store, ev *model.Event, offsets ...time.Duration) {
	t.Helper()
	at := make([]time.Time, len(offsets))
	for i, o := range offsets {
		at[i] = t0.Add(o)
	}
	_, err := s.InsertOccurrences(context.Background(), ev.ID, at, false, t0)
	require.NoError(t, err)
}

// markFired records ev's row at t0+offset delivered. The test sets the
// state directly: a claim would take the event's older rows first, and
// those must stay unfired here.
func markFired(t *testing.T, s *repository.Store, ev *model.Event, offset time.Duration) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.ListOccurrences(ctx, model.OccurrenceFilter{EventID: ev.ID, Unrestricted: true, Limit: 100})
	require.NoError(t, err)
	for _, o := range rows {
		if o.ScheduledAt.Equal(t0.Add(offset)) {
			_, err := s.DB().ExecContext(ctx, s.DB().Rebind(`UPDATE occurrences SET status = 'completed' WHERE id = ?`), o.ID)
			require.NoError(t, err)
			return
		}
	}
	t.Fatalf("no row at t0+%s", offset)
}

// A dead man's switch: an every-minute job whose instants stop firing is
// told once when its first instant is missed_after late, not again while
// the outage lasts, and again for an instant that fails to fire after the
// job fired once more. Instants of the old outage found later (left
// behind, recorded missed) are not news.
func TestMissedIsToldOncePerOutage(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		r := newReceiver(t, testSecret)
		clk := newClock()
		n, _ := webhookNotifier(t, r, clk, notify.Options{}, notify.Missed)
		scanner := notify.NewScanner(s, n, nil, clk.Now, notify.ScannerConfig{Interval: time.Minute,
			MissedAfter: 5 * time.Minute}, nil)
		scan := func(want int) {
			t.Helper()
			got, err := scanner.RunOnce(ctx)
			require.NoError(t, err)
			require.Equal(t, want, got, "notices at %s", clk.Now().Sub(t0))
			n.RunOnce(ctx)
		}
		scan(0) // the first scan starts now

		sync := createEvent(t, s, "hourly sync", "FREQ=MINUTELY")
		plan(t, s, sync, time.Minute, 2*time.Minute, 3*time.Minute, 4*time.Minute, 5*time.Minute)
		clk.Advance(5*time.Minute + 30*time.Second)
		scan(0) // t0+1m is 4m30s late: not yet
		clk.Advance(time.Minute)
		scan(1) // t0+1m is 5m30s late

		got := missedNotices(t, r)
		require.Len(t, got, 1)
		require.Equal(t, sync.ID, got[0].EventID)
		require.Equal(t, "Event hourly sync: did not fire", got[0].Title)
		require.Equal(t, "overdue", got[0].Fields["reason"])
		require.Equal(t, t0.Add(time.Minute).Format(time.RFC3339), got[0].Fields["first_scheduled_at"])
		require.Contains(t, got[0].Text, "had not fired 5m0s after its time")

		clk.Advance(time.Minute)
		scan(0) // t0+2m late too: the same outage

		markFired(t, s, sync, 4*time.Minute) // the job fires again
		clk.Advance(time.Minute)
		scan(0) // t0+3m, left behind by the outage, is found late now: not news
		// A row of the old outage recorded missed later is not news either.
		missed := "missed: older than the catch-up window of 1h0m0s"
		_, err := s.InsertPlanned(ctx, sync.ID, []model.Planned{{At: t0.Add(30 * time.Second),
			Status: model.OccurrenceMissed, Reason: model.ReasonCatchUpWindow, Note: missed}}, clk.Now())
		require.NoError(t, err)
		clk.Advance(time.Minute)
		scan(0)
		require.Len(t, r.received(), 1)

		clk.Advance(time.Minute) // t0+5m, after the job fired, is 5m late: a new outage
		scan(1)
		got = missedNotices(t, r)
		require.Len(t, got, 2)
		require.Equal(t, t0.Add(5*time.Minute).Format(time.RFC3339), got[1].Fields["first_scheduled_at"])
	})
}

func setTags(t *testing.T, s *repository.Store, ev *model.Event, tags ...string) {
	t.Helper()
	ev.Tags = tags
	require.NoError(t, s.UpdateEvent(context.Background(), ev, ev.Version))
	ev.Version++
}

// Instants recorded missed (the catch-up window after every instance was
// down) are told with their reason and count, one notice per event; a
// channel scoped by tags hears only of its events.
func TestMissedRowsAreToldPerEventAndScopedByTags(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		teamA, all := newReceiver(t, testSecret), newReceiver(t, testSecret)
		clk := newClock()
		n := notify.New(notify.Deps{Channels: []notify.Channel{
			{ID: "config:a", Name: "team-a", Type: "webhook", URL: teamA.srv.URL, Secret: testSecret,
				Kinds: []notify.Kind{notify.Missed}, Tags: []string{"team-a"}},
			{ID: "config:all", Name: "ops", Type: "webhook", URL: all.srv.URL, Secret: testSecret},
		}, HTTP: loopbackClient(), Now: clk.Now}, notify.Options{})
		scanner := notify.NewScanner(s, n, nil, clk.Now, notify.ScannerConfig{Interval: time.Minute}, nil)
		_, err := scanner.RunOnce(ctx)
		require.NoError(t, err)

		billing := createEvent(t, s, "billing", "FREQ=HOURLY")
		setTags(t, s, billing, "team-a", "billing")
		reports := createEvent(t, s, "reports", "FREQ=HOURLY")
		setTags(t, s, reports, "team-b")
		record := func(ev *model.Event, hours ...int) {
			rows := make([]model.Planned, len(hours))
			for i, h := range hours {
				rows[i] = model.Planned{At: t0.Add(time.Duration(h) * time.Hour), Status: model.OccurrenceMissed,
					Reason: model.ReasonCatchUpWindow, Note: "missed: older than the catch-up window of 1h0m0s"}
			}
			_, err := s.InsertPlanned(ctx, ev.ID, rows, clk.Now())
			require.NoError(t, err)
		}
		record(billing, -5, -4, -3)
		record(reports, -4)
		clk.Advance(time.Minute)
		got, err := scanner.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, got, "one notice per event")
		n.RunOnce(ctx)

		a := missedNotices(t, teamA)
		require.Len(t, a, 1, "team-a hears of its own event only")
		require.Equal(t, billing.ID, a[0].EventID)
		require.Equal(t, "3", a[0].Fields["instants"])
		require.Equal(t, "catch_up_window", a[0].Fields["reason"])
		require.Equal(t, t0.Add(-5*time.Hour).Format(time.RFC3339), a[0].Fields["first_scheduled_at"])
		require.Equal(t, t0.Add(-3*time.Hour).Format(time.RFC3339), a[0].Fields["last_scheduled_at"])
		require.ElementsMatch(t, []string{"team-a", "billing"}, a[0].Tags)
		require.Contains(t, a[0].Text, "3 instants from")
		require.Len(t, missedNotices(t, all), 2, "an unscoped channel hears of both")
	})
}
