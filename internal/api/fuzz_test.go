package api

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// The fuzz targets post arbitrary bodies and hold the API to invariant 9:
// never a 5xx, never a partial write. Each runs on SQLite and on PostgreSQL,
// whose text and jsonb refuse what SQLite stores (NUL, invalid UTF-8, lone
// surrogates). Each target builds one env per process (fuzz workers are
// separate processes, each running the target function, so each gets its
// own env) and reuses it for every iteration. The seeds live in
// testdata/fuzz/<target>; the ones here depend on the clock.

// fuzzEnv is an env without a practical rate limit, so a long fuzz run keeps
// exercising the handlers rather than the limiter.
func fuzzEnv(f *testing.F, open func(testing.TB) *repository.Store) *env {
	return newEnv(f, open, withOptions(func(o *Options) {
		o.RateLimit = coordination.Limit{Rate: 1e6, Burst: 1e6}
	}))
}

// hostileText are bodies whose text no database should be handed: each must
// be a 400 naming its field.
func hostileText(soon string) []string {
	return []string{
		`{"name":"a\u0000b","start_time":"` + soon + `","webhook":"http://127.0.0.1:9/h","tags":["team-a"]}`,
		`{"name":"a","description":"\u0000","start_time":"` + soon + `","webhook":"http://127.0.0.1:9/h","tags":["team-a"]}`,
		`{"name":"a","start_time":"` + soon + `","webhook":"http://127.0.0.1:9/h","tags":["team-a"],"metadata":{"k":"\ud800"}}`,
		`{"name":"a","start_time":"` + soon + `","webhook":"http://127.0.0.1:9/h","tags":["team-a"],"metadata":{"k":["\u0000"]}}`,
		"{\"name\":\"a\",\"start_time\":\"" + soon + "\",\"webhook\":\"http://127.0.0.1:9/h\",\"tags\":[\"team-a\"],\"metadata\":{\"k\":\"\xff\xfe\"}}",
	}
}

func FuzzCreateEvent(f *testing.F)         { fuzzCreateEvent(f, repositorytest.SQLite) }
func FuzzCreateEventPostgres(f *testing.F) { fuzzCreateEvent(f, repositorytest.Postgres) }
func FuzzUpdateEvent(f *testing.F)         { fuzzUpdateEvent(f, repositorytest.SQLite) }
func FuzzUpdateEventPostgres(f *testing.F) { fuzzUpdateEvent(f, repositorytest.Postgres) }

// rowCounts counts the rows a create writes.
type rowCounts struct{ events, occurrences, eventTags int }

func countRows(t testing.TB, e *env) rowCounts {
	t.Helper()
	var c rowCounts
	err := e.store.DB().QueryRowContext(context.Background(), `SELECT
		(SELECT count(*) FROM events), (SELECT count(*) FROM occurrences), (SELECT count(*) FROM event_tags)`).
		Scan(&c.events, &c.occurrences, &c.eventTags)
	require.NoError(t, err)
	return c
}

// snapshot is every stored column of one event, its tags and its
// occurrences, for byte-for-byte comparison.
func snapshot(t testing.TB, e *env, id string) [][]any {
	t.Helper()
	ctx := context.Background()
	var out [][]any
	for _, q := range []string{
		`SELECT * FROM events WHERE id = ?`,
		`SELECT * FROM event_tags WHERE event_id = ? ORDER BY tag`,
		`SELECT * FROM occurrences WHERE event_id = ? ORDER BY scheduled_at, id`,
	} {
		rows, err := e.store.DB().QueryxContext(ctx, e.store.DB().Rebind(q), id)
		require.NoError(t, err)
		for rows.Next() {
			row, err := rows.SliceScan()
			require.NoError(t, err)
			out = append(out, row)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
	}
	return out
}

// fuzzTokens are the callers a fuzz input may use: the master token, or a
// write token scoped to "team-a" (so scope checks are fuzzed too).
func fuzzTokens(e *env) [2]string {
	return [2]string{e.master, e.mint("write", []string{matrixTag})}
}

func inAnHour() string { return time.Now().Add(time.Hour).UTC().Format(time.RFC3339) }

func fuzzCreateEvent(f *testing.F, open func(testing.TB) *repository.Store) {
	soon := inAnHour()
	for _, s := range append(hostileText(soon),
		`{"name":"a","start_time":"`+soon+`","webhook":"http://127.0.0.1:9/h","tags":["team-a"]}`,
		`{"name":"a","start_time":"`+soon+`","rrule":"FREQ=MINUTELY;INTERVAL=1","webhook":"http://127.0.0.1:9/h","tags":["team-a"]}`,
		`{"name":"a","start_time":"`+soon+`","cron":"* * * * *","action":{"type":"apicall","params":{"method":"POST","url":"http://127.0.0.1:9/x"}},"tags":["team-a"]}`,
		`{"name":"a","start_time":"`+soon+`","schedule":{"frequency":"daily","at":["09:00"]},"timezone":"Europe/Prague","webhook":"q:client","tags":["team-a","team-b"]}`,
	) {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	e := fuzzEnv(f, open)
	tokens := fuzzTokens(e)
	f.Fuzz(func(t *testing.T, body []byte, scoped bool) {
		e := e.withT(t)
		token := tokens[0]
		if scoped {
			token = tokens[1]
		}
		before := countRows(t, e)
		res := e.do("POST", "/events", token, body)
		if res.Status >= 500 {
			t.Fatalf("status %d for body %q: %s", res.Status, body, res.Body)
		}
		after := countRows(t, e)
		if res.Status >= 400 {
			assertErrorBody(t, res)
			if after != before {
				t.Fatalf("rows after a %d: got %+v, want unchanged %+v (body %q)", res.Status, after, before, body)
			}
			return
		}
		require.Equal(t, http.StatusCreated, res.Status)
		if got, want := after.events, before.events+1; got != want {
			t.Fatalf("events after a 201: got %d, want %d", got, want)
		}
		var ev struct{ ID string }
		res.json(t, &ev)
		if got := e.do("GET", "/events/"+ev.ID, token, nil).Status; got != http.StatusOK {
			t.Fatalf("created event is not readable by its creator: %d", got)
		}
	})
}

func fuzzUpdateEvent(f *testing.F, open func(testing.TB) *repository.Store) {
	for _, s := range []string{
		`{"name":"\u0000"}`,
		`{"metadata":{"a":{"b":"\udc00"}}}`,
		`{"action":{"type":"apicall","params":{"method":"POST","url":"http://127.0.0.1:9/x","body":"\u0000"}}}`,
		"{\"description\":\"\xc3\x28\"}",
		`{"name":"renamed"}`,
		`{"start_time":"` + inAnHour() + `"}`,
		`{"rrule":"FREQ=HOURLY;COUNT=5"}`,
		`{"rrule":null,"cron":"*/5 * * * *"}`,
		`{"status":"paused"}`,
		`{"tags":["team-b"]}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	e := fuzzEnv(f, open)
	tokens := fuzzTokens(e)
	// base is the event under update; a successful update may move it out of
	// the scoped token's reach, so the next iteration starts from a new one.
	var base string
	newBase := func(e *env) string {
		body := eventBody(matrixTag)
		body["rrule"] = "FREQ=MINUTELY;COUNT=30"
		body["metadata"] = map[string]any{"k": []any{1, "two", nil}}
		ev := e.createEvent(e.master, body)
		id, _ := ev["id"].(string)
		return id
	}
	f.Fuzz(func(t *testing.T, body []byte, scoped bool) {
		e := e.withT(t)
		if base == "" {
			base = newBase(e)
		}
		token := tokens[0]
		if scoped {
			token = tokens[1]
		}
		beforeRows := countRows(t, e)
		before := snapshot(t, e, base)
		res := e.do("PUT", "/events/"+base, token, body)
		if res.Status >= 500 {
			t.Fatalf("status %d for body %q: %s", res.Status, body, res.Body)
		}
		if res.Status < 400 {
			base = ""
			return
		}
		assertErrorBody(t, res)
		if after := snapshot(t, e, base); !reflect.DeepEqual(after, before) {
			t.Fatalf("event changed after a %d (body %q):\nbefore %v\nafter  %v", res.Status, body, before, after)
		}
		if after := countRows(t, e); after != beforeRows {
			t.Fatalf("rows after a %d: got %+v, want unchanged %+v", res.Status, after, beforeRows)
		}
	})
}

// assertErrorBody checks that a 4xx is the JSON error a client can show.
func assertErrorBody(t *testing.T, res response) {
	t.Helper()
	var eb struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(res.Body, &eb); err != nil || strings.TrimSpace(eb.Error) == "" {
		t.Fatalf("a %d must carry {\"error\": …}: %s", res.Status, res.Body)
	}
}
