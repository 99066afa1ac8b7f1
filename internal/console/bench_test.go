package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/api"
	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/lifecycle"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/notify"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/internal/scheduler"
	"github.com/qhronos/qhronos/internal/secrets"
)

// Bench data: 100,000 events (100 tags) and 1,000,000 occurrences over the
// last 30 days (90 % completed, 5 % failed, 2 % missed, 3 % pending in the
// next day), one attempt per completed or failed occurrence.
const seedSQL = `
SELECT qhronos_ensure_partitions(now() - interval '31 days', now() + interval '2 days');
INSERT INTO events (id, name, start_time, timezone, rrule, action_type, action, webhook, tags_json, status,
	created_at, updated_at, next_run_at)
SELECT md5('e' || g)::uuid, 'event ' || g, now() - interval '30 days', 'UTC', 'FREQ=DAILY', 'webhook',
	'{"type":"webhook","params":{"url":"https://example.com/hook"}}', 'https://example.com/hook',
	'["t' || (g % 100) || '"]', 'active', now() - g * interval '1 second', now(), now() + interval '1 hour'
FROM generate_series(1, 100000) g;
INSERT INTO event_tags (event_id, tag) SELECT md5('e' || g)::uuid, 't' || (g % 100) FROM generate_series(1, 100000) g;
INSERT INTO occurrences (id, event_id, scheduled_at, status, attempt_count, next_attempt_at, status_code,
	error_message, started_at, completed_at, created_at, updated_at)
SELECT md5('o' || g)::uuid, md5('e' || (g % 100000 + 1))::uuid, ts, st,
	CASE WHEN st IN ('completed', 'failed') THEN 1 ELSE 0 END, ts,
	CASE st WHEN 'completed' THEN 200 WHEN 'failed' THEN 500 END,
	CASE st WHEN 'failed' THEN 'HTTP 500' WHEN 'missed' THEN 'outside the catch-up window' END,
	CASE WHEN st IN ('completed', 'failed') THEN ts END, CASE WHEN st <> 'pending' THEN ts END, ts, ts
FROM (SELECT g,
	CASE WHEN g % 100 < 97 THEN now() - (g % 43200) * interval '1 minute' + (g / 100000) * interval '1 second'
		ELSE now() + (g % 1440) * interval '1 minute' + (g / 100000) * interval '1 second' END AS ts,
	CASE WHEN g % 100 < 90 THEN 'completed' WHEN g % 100 < 95 THEN 'failed' WHEN g % 100 < 97 THEN 'missed'
		ELSE 'pending' END AS st
	FROM generate_series(1, 1000000) g) s;
INSERT INTO attempts (id, occurrence_id, event_id, attempt, started_at, duration_ms, status_code, outcome, lateness_ms,
	scheduled_at)
SELECT md5('a' || id::text)::uuid, id, event_id, 1, scheduled_at + interval '40 milliseconds',
	20 + (abs(hashtext(id::text)) % 200), status_code, status, 40 + (abs(hashtext(id::text)) % 60), scheduled_at
FROM occurrences WHERE status IN ('completed', 'failed');
ANALYZE;
`

// BenchmarkConsolePages measures each console page's server time (the
// console handler and every API call it makes, in process) on PostgreSQL
// with 100,000 events and 1,000,000 occurrences. Seeding takes a minute or
// two; the figures are in BENCHMARKS.md.
//
//	go test ./internal/console -run '^$' -bench ConsolePages -benchtime 20x
func BenchmarkConsolePages(b *testing.B) {
	ctx := context.Background()
	schemaURL := repositorytest.MigratedPostgresSchema(b)
	store, err := repository.OpenPostgres(ctx, schemaURL, repository.Options{MaxOpenConns: 8, ConnectTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	if _, err := store.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	db, err := sqlx.Open("pgx", schemaURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	seeded := time.Now()
	if _, err := db.ExecContext(ctx, seedSQL); err != nil {
		b.Fatalf("seed: %v", err)
	}
	b.Logf("seeded 100,000 events and 1,000,000 occurrences in %s", time.Since(seeded).Round(time.Second))

	const master = "bench-master-token-0123456789abcdef"
	coord := coordination.NewLocal(time.Now)
	b.Cleanup(func() { _ = coord.Close() })
	keys := auth.NewKeyring([]byte("bench-jwt-secret-0123456789abcdef0123"))
	// The API as qhronosd wires it, without the background loops: the
	// events service (with its secrets box) behind events, endpoints and
	// calendars, and the notification channels' admin.
	box, err := secrets.NewBox(testKey)
	if err != nil {
		b.Fatal(err)
	}
	registry := actions.NewRegistry()
	if err := registry.Register(actions.NewWebhook(actions.HTTPConfig{Version: "bench"})); err != nil {
		b.Fatal(err)
	}
	schedCfg := scheduler.ConfigFrom(config.Default(), "bench")
	service := lifecycle.New(lifecycle.Deps{Store: store, Actions: registry, Secrets: box,
		Calendars: calendar.NewCache(schedCfg.Recurrence, 0)},
		lifecycle.Options{Recurrence: schedCfg.Recurrence, Window: schedCfg.Window(), MaxTimeout: 60 * time.Second})
	srv := api.New(api.Deps{Store: store, Events: service, Secrets: box,
		Auth: auth.NewAuthenticator(auth.Config{MasterToken: master, Keys: keys}, store, time.Now), Actions: registry,
		Coord: coord, Logger: zap.NewNop(), Now: time.Now,
		Notifications: notify.NewAdmin(store, box, outbound.Options{}, notify.New(notify.Deps{Store: store, Box: box,
			Logger: zap.NewNop()}, notify.Options{}), time.Now),
		Info: api.Info{Version: "bench", InstanceID: "bench", StartedAt: time.Now()}}, api.OptionsFrom(config.Default()))
	c, err := New(Options{API: srv.Handler(), EncryptionKey: testKey})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	sealed, err := c.sessions.seal(session{ID: "bench", Token: master, CSRF: "x", Expires: time.Now().Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	cookie := &http.Cookie{Name: sessionCookie, Value: sealed}

	// 50 endpoints and 20 calendars, made through the API; 2,000 events
	// deliver through the endpoints (their attempts with them) and 2,000
	// honour the calendars.
	post := func(path, body string) string {
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+master)
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		if w.Code != http.StatusCreated {
			b.Fatalf("POST %s: %d %s", path, w.Code, w.Body.String())
		}
		var out struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			b.Fatal(err)
		}
		return out.ID
	}
	var endpointID, calendarID string
	for i := range 50 {
		endpointID = post("/endpoints", fmt.Sprintf(`{"name":"endpoint %d","url":"https://example.com/hook/%d","tags":["t%d"]}`, i, i, i%100))
	}
	for i := range 20 {
		calendarID = post("/calendars", fmt.Sprintf(`{"name":"calendar %d","timezone":"Europe/Prague","dates":["2031-01-01"],`+
			`"ranges":[{"from":"2031-07-01","to":"2031-07-14"}],"rrules":["FREQ=WEEKLY;BYDAY=SA,SU"]}`, i))
	}
	// A notification channel with a full list of recent notices (the
	// newest model.NoticesKeep are kept).
	channelID := post("/notification-channels", `{"name":"ops","type":"webhook","url":"https://example.com/notices"}`)
	for i := range model.NoticesKeep {
		if err := store.RecordNotice(ctx, model.SentNotice{ChannelID: channelID, At: time.Now().Add(-time.Duration(i) * time.Minute),
			Kind: "occurrence_failed", Summary: fmt.Sprintf("occurrence %d failed", i), Outcome: model.NoticeDelivered,
			Answer: "HTTP 204"}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `
WITH ep AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM endpoints),
ev AS (SELECT id, row_number() OVER (ORDER BY id) AS m FROM events ORDER BY id LIMIT 2000)
UPDATE events e SET endpoint_id = ep.id FROM ev, ep WHERE e.id = ev.id AND ep.n = ev.m % 50;
UPDATE attempts a SET endpoint_id = e.endpoint_id FROM events e WHERE a.event_id = e.id AND e.endpoint_id IS NOT NULL;
WITH c AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM calendars),
ev AS (SELECT id, row_number() OVER (ORDER BY id DESC) AS m FROM events ORDER BY id DESC LIMIT 2000)
INSERT INTO event_calendars (event_id, calendar_id) SELECT ev.id, c.id FROM ev JOIN c ON c.n = ev.m % 20;
ANALYZE;`); err != nil {
		b.Fatalf("link endpoints and calendars: %v", err)
	}

	var eventID, occID string
	if err := db.GetContext(ctx, &eventID, `SELECT md5('e' || 4242)::uuid::text`); err != nil {
		b.Fatal(err)
	}
	if err := db.GetContext(ctx, &occID, `SELECT id::text FROM occurrences WHERE status = 'failed' LIMIT 1`); err != nil {
		b.Fatal(err)
	}
	// A pending occurrence ahead: its page offers skip and move.
	var pendingID string
	if err := db.GetContext(ctx, &pendingID, `SELECT id::text FROM occurrences WHERE status = 'pending'
		AND scheduled_at > now() + interval '1 hour' LIMIT 1`); err != nil {
		b.Fatal(err)
	}
	// A second event with a change history (50 edits, a pause until next
	// week with a reason, an exception) for the History tab and the paused
	// event page; the first stays a plain active event.
	var storyID string
	if err := db.GetContext(ctx, &storyID, `SELECT md5('e' || 4243)::uuid::text`); err != nil {
		b.Fatal(err)
	}
	apiDo := func(method, path, body string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+master)
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		if w.Code > 299 {
			b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body.String())
		}
	}
	for i := range 50 {
		apiDo("PUT", "/events/"+storyID, `{"description":"edit `+strconv.Itoa(i)+`"}`)
	}
	var start time.Time
	if err := db.GetContext(ctx, &start, `SELECT start_time FROM events WHERE id = $1`, storyID); err != nil {
		b.Fatal(err)
	}
	apiDo("POST", "/events/"+storyID+"/exceptions", `{"at":"`+start.AddDate(0, 0, 33).UTC().Format(time.RFC3339Nano)+
		`","action":"skip","reason":"bench"}`)
	apiDo("POST", "/events/"+storyID+"/pause", `{"until":"`+time.Now().Add(7*24*time.Hour).UTC().Format(time.RFC3339)+`","reason":"bench freeze"}`)
	pages := []struct{ name, path string }{
		{"overview", "/ui/"},
		{"events", "/ui/events"},
		{"events-search", "/ui/events?q=" + url.QueryEscape("event 4242")},
		{"events-tag-status", "/ui/events?tags=t7&status=active"},
		{"event-detail", "/ui/events/" + eventID},
		{"event-paused", "/ui/events/" + storyID},
		{"event-history", "/ui/events/" + storyID + "?tab=history"},
		{"event-edit", "/ui/events/" + eventID + "/edit"},
		{"event-new", "/ui/events/new"},
		{"occurrence", "/ui/occurrences/" + occID},
		{"occurrence-pending", "/ui/occurrences/" + pendingID},
		{"failures-24h", "/ui/failures"},
		{"failures-all", "/ui/failures?window=all"},
		{"failures-500-tag", "/ui/failures?window=7d&status=failed&status_code=500&tags=t7"},
		{"bulk-confirm", "/ui/failures/replay?window=24h"},
		{"live", "/ui/live"},
		{"tokens", "/ui/tokens"},
		{"endpoints", "/ui/endpoints"},
		{"endpoints-open", "/ui/endpoints?state=open"},
		{"endpoint-detail", "/ui/endpoints/" + endpointID},
		{"endpoint-edit", "/ui/endpoints/" + endpointID + "/edit"},
		{"endpoint-new", "/ui/endpoints/new"},
		{"calendars", "/ui/calendars"},
		{"calendar-detail", "/ui/calendars/" + calendarID},
		{"calendar-edit", "/ui/calendars/" + calendarID + "/edit"},
		{"calendar-new", "/ui/calendars/new"},
		{"notifications", "/ui/notifications"},
		{"notification-channel", "/ui/notifications/" + channelID},
		{"concurrency", "/ui/concurrency"},
		{"search-name", "/ui/search?q=" + url.QueryEscape("event 4242")},
		{"search-id", "/ui/search?q=" + occID},
		{"api-reference", "/ui/api"},
	}
	serve := func(path string) time.Duration {
		req := httptest.NewRequest("GET", path, nil)
		req.AddCookie(cookie)
		w := httptest.NewRecorder()
		start := time.Now()
		c.ServeHTTP(w, req)
		took := time.Since(start)
		// The header search answers with a redirect to what it found.
		found := w.Code == http.StatusSeeOther && strings.HasPrefix(path, "/ui/search") &&
			!strings.HasPrefix(w.Header().Get("Location"), "/ui/login")
		if w.Code != http.StatusOK && !found {
			b.Fatalf("%s: %d %s", path, w.Code, w.Body.String())
		}
		if strings.Contains(w.Body.String(), `class="error"`) {
			b.Fatalf("%s shows an error: %s", path, w.Body.String())
		}
		return took
	}
	// The API reads behind the heaviest pages, alone.
	since := func(d time.Duration) string { return url.QueryEscape(time.Now().Add(-d).UTC().Format(time.RFC3339)) }
	apiCalls := []struct{ name, path string }{
		{"api-stats-24h", "/stats"},
		{"api-stats-1h", "/stats?since=" + since(time.Hour)},
		{"api-timeline-1h", "/stats/timeline?step=1m&since=" + since(time.Hour)},
		{"api-timeline-24h", "/stats/timeline?step=15m&since=" + since(24*time.Hour)},
		{"api-timeline-24h-1h", "/stats/timeline?step=1h&since=" + since(24*time.Hour)},
		{"api-status", "/status"},
		{"api-failures-all", "/occurrences?status=failed,timed_out,missed&limit=25"},
		{"api-endpoints", "/endpoints?limit=25"},
		{"api-events-by-calendar", "/events?limit=50&calendar_id=" + calendarID},
		{"api-events-paused", "/events?limit=100&status=paused"},
		{"api-failures-24h", "/occurrences?status=failed,timed_out,missed&limit=25&from=" + since(24*time.Hour)},
	}
	for _, a := range apiCalls {
		b.Run(a.name, func(b *testing.B) {
			for range b.N {
				req := httptest.NewRequest("GET", a.path, nil)
				req.Header.Set("Authorization", "Bearer "+master)
				w := httptest.NewRecorder()
				srv.Handler().ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", a.path, w.Code, w.Body.String())
				}
			}
		})
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			first := serve(p.path) // the first view, before any cache of ours is warm
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				times = append(times, serve(p.path))
			}
			b.StopTimer()
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "max-ms")
		})
	}
}
