package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for the test's own queries
	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// deployment is one production deployment under test: a fresh PostgreSQL
// schema, optionally Redis, and the environment every instance shares.
type deployment struct {
	t       testing.TB
	appName string // application_name of every server connection, unique to the test
	dbURL   string
	db      *sqlx.DB
	token   string
	env     map[string]string
}

// newDeployment creates a fresh schema and the production environment with
// short leases, rescues and backoffs so faults heal within seconds.
func newDeployment(t testing.TB) *deployment {
	t.Helper()
	schemaURL := repositorytest.MigratedPostgresSchema(t)
	appName := "qe2e_" + qhronostest.RandomHex(t, 6)
	u, err := url.Parse(schemaURL)
	require.NoError(t, err)
	q := u.Query()
	q.Set("application_name", appName)
	u.RawQuery = q.Encode()

	db, err := sqlx.Open("pgx", schemaURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })

	d := &deployment{t: t, appName: appName, dbURL: u.String(), db: db, token: qhronostest.RandomHex(t, 32)}
	d.env = map[string]string{
		"QHRONOS_DATABASE_URL":                   d.dbURL,
		"QHRONOS_DATABASE_CONNECT_TIMEOUT":       "3s",
		"QHRONOS_DATABASE_MAX_OPEN_CONNS":        "8",
		"QHRONOS_AUTH_MASTER_TOKEN":              d.token,
		"QHRONOS_AUTH_JWT_SECRET":                qhronostest.RandomHex(t, 32),
		"QHRONOS_HMAC_DEFAULT_SECRET":            qhronostest.RandomHex(t, 32),
		"QHRONOS_SECRETS_ENCRYPTION_KEY":         qhronostest.RandomHex(t, 32),
		"QHRONOS_OUTBOUND_ALLOW_CIDRS":           "127.0.0.0/8",
		"QHRONOS_SCHEDULER_LEASE":                "3s",
		"QHRONOS_SCHEDULER_LEASE_RENEW_INTERVAL": "1s",
		"QHRONOS_SCHEDULER_RESCUER_INTERVAL":     "500ms",
		"QHRONOS_SCHEDULER_MAX_SLEEP":            "250ms",
		"QHRONOS_SCHEDULER_DRAIN_TIMEOUT":        "5s",
		"QHRONOS_SCHEDULER_WORKERS":              "32",
		"QHRONOS_ACTIONS_ATTEMPT_TIMEOUT":        "2s",
		"QHRONOS_ACTIONS_MAX_ATTEMPT_TIMEOUT":    "2s",
		"QHRONOS_RETRY_INITIAL_BACKOFF":          "1s",
		"QHRONOS_RETRY_MAX_BACKOFF":              "2s",
		"QHRONOS_SERVER_SHUTDOWN_TIMEOUT":        "2s",
		"QHRONOS_ARCHIVAL_ENABLED":               "false",
		"QHRONOS_LOG_LEVEL":                      "info",
	}
	return d
}

// withRedis points every instance at redisURL under a prefix.
func (d *deployment) withRedis(redisURL, prefix string) {
	d.env["QHRONOS_REDIS_URL"] = redisURL
	d.env["QHRONOS_REDIS_PREFIX"] = prefix
}

// withSharedRedis uses the shared Redis under a prefix unique to the test.
func (d *deployment) withSharedRedis() {
	d.t.Helper()
	_, prefix := coordinationtest.RedisClient(d.t)
	u := os.Getenv("QHRONOS_TEST_REDIS_URL")
	if u == "" {
		u = coordinationtest.DefaultRedisURL
	}
	d.withRedis(u, prefix)
}

// start starts one instance of the deployment.
func (d *deployment) start(name string, extra ...string) *proc {
	d.t.Helper()
	return start(d.t, name, d.instanceEnv(extra...))
}

func (d *deployment) instanceEnv(extra ...string) map[string]string {
	env := make(map[string]string, len(d.env)+len(extra)/2)
	for k, v := range d.env {
		env[k] = v
	}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return env
}

// client talks to the API with the master token.
type client struct {
	t     testing.TB
	token string
	http  *http.Client
}

func (d *deployment) client() *client {
	return &client{t: d.t, token: d.token, http: &http.Client{Timeout: 5 * time.Second}}
}

// do sends a JSON request and returns the status and body.
func (c *client) do(method, url string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, out, err
}

// eventJSON is what the tests read of an event.
type eventJSON struct {
	ID        string     `json:"id"`
	Status    string     `json:"status"`
	LastRunAt *time.Time `json:"last_run_at"`
}

// events lists every event matching query through p, following the Link
// header page by page.
func (c *client) events(p *proc, query string) ([]eventJSON, error) {
	var out []eventJSON
	next := "/events?limit=500&" + query
	for range 1000 {
		req, err := http.NewRequest("GET", p.url+next, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		res, err := c.http.Do(req)
		if err != nil {
			return nil, err
		}
		var page []eventJSON
		err = json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("list events: status %d: %v", res.StatusCode, err)
		}
		out = append(out, page...)
		link := res.Header.Get("Link")
		if link == "" {
			return out, nil
		}
		next = strings.TrimPrefix(strings.SplitN(link, ">", 2)[0], "<")
	}
	return nil, fmt.Errorf("list events: more than 1000 pages")
}

// createEvent creates a one-time webhook event at `at` through p and
// returns its id.
func (c *client) createEvent(p *proc, name string, at time.Time, hook string) (string, error) {
	status, body, err := c.do("POST", p.url+"/events", map[string]any{
		"name": name, "start_time": at.UTC().Format(time.RFC3339Nano), "webhook": hook, "tags": []string{"e2e"},
	})
	if err != nil {
		return "", fmt.Errorf("create event: %w", err)
	}
	if status != http.StatusCreated {
		return "", fmt.Errorf("create event: status %d: %s", status, body)
	}
	var ev struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return "", fmt.Errorf("decode event: %w", err)
	}
	return ev.ID, nil
}

// createEvents creates n one-time events spread over [from, from+spread)
// through the given instances in turn, a few at a time; it returns their ids.
func (c *client) createEvents(procs []*proc, n int, from time.Time, spread time.Duration, hook string) []string {
	c.t.Helper()
	ids := make([]string, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 6)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			at := from.Add(spread * time.Duration(i) / time.Duration(n))
			id, err := c.createEvent(procs[i%len(procs)], fmt.Sprintf("e2e-%d", i), at, hook)
			if err != nil {
				errs <- err
				return
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		c.t.Fatalf("%v", err)
	}
	return ids
}

// occurrenceJSON is what the API shows of an occurrence.
type occurrenceJSON struct {
	ID           string `json:"id"`
	EventID      string `json:"event_id"`
	Status       string `json:"status"`
	AttemptCount int    `json:"attempt_count"`
}

// attemptJSON is what the API shows of an attempt.
type attemptJSON struct {
	Attempt    int    `json:"attempt"`
	Outcome    string `json:"outcome"`
	StatusCode *int   `json:"status_code"`
}

// occurrences lists an event's occurrences through p.
func (c *client) occurrences(p *proc, eventID string) ([]occurrenceJSON, error) {
	status, body, err := c.do("GET", p.url+"/events/"+eventID+"/occurrences", nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("list occurrences: status %d: %s", status, body)
	}
	var out []occurrenceJSON
	return out, json.Unmarshal(body, &out)
}

// onlyOccurrence waits until the one-time event has its occurrence row and
// returns it.
func (c *client) onlyOccurrence(p *proc, eventID string) occurrenceJSON {
	c.t.Helper()
	var occ occurrenceJSON
	eventually(c.t, 10*time.Second, "the event has its occurrence", func() bool {
		list, err := c.occurrences(p, eventID)
		if err != nil || len(list) != 1 {
			return false
		}
		occ = list[0]
		return true
	})
	return occ
}

// occurrence reads one occurrence through p.
func (c *client) occurrence(p *proc, id string) (occurrenceJSON, error) {
	var occ occurrenceJSON
	status, body, err := c.do("GET", p.url+"/occurrences/"+id, nil)
	if err != nil {
		return occ, err
	}
	if status != http.StatusOK {
		return occ, fmt.Errorf("get occurrence: status %d: %s", status, body)
	}
	return occ, json.Unmarshal(body, &occ)
}

// waitStatus waits until the API shows the occurrence in status.
func (c *client) waitStatus(p *proc, id, status string, timeout time.Duration) occurrenceJSON {
	c.t.Helper()
	var occ occurrenceJSON
	eventually(c.t, timeout, "occurrence "+id+" is "+status, func() bool {
		var err error
		occ, err = c.occurrence(p, id)
		return err == nil && occ.Status == status
	})
	return occ
}

// attempts lists an occurrence's attempts through p.
func (c *client) attempts(p *proc, id string) []attemptJSON {
	c.t.Helper()
	status, body, err := c.do("GET", p.url+"/occurrences/"+id+"/attempts", nil)
	require.NoError(c.t, err)
	require.Equal(c.t, http.StatusOK, status, "attempts: %s", body)
	var out []attemptJSON
	require.NoError(c.t, json.Unmarshal(body, &out), "attempts: %s", body)
	return out
}

// statusCounts counts the deployment's occurrences per status, from the
// database that every instance shares.
func (d *deployment) statusCounts(ctx context.Context) (map[string]int, error) {
	var rows []struct {
		Status string `db:"status"`
		N      int    `db:"n"`
	}
	if err := d.db.SelectContext(ctx, &rows, `SELECT status, count(*) AS n FROM occurrences GROUP BY status`); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}

// waitAllCompleted waits until n occurrences exist and all are completed.
func (d *deployment) waitAllCompleted(n int, timeout time.Duration) {
	d.t.Helper()
	var last map[string]int
	done := qhronostest.Eventually(timeout, nil, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		counts, err := d.statusCounts(ctx)
		if err != nil {
			return false
		}
		last = counts
		return counts["completed"] == n && len(counts) == 1
	})
	if !done {
		d.t.Fatalf("after %s, want %d occurrences all completed; got %s", timeout, n, formatCounts(last))
	}
}

// occurrenceIDs returns the id of every occurrence of the deployment.
func (d *deployment) occurrenceIDs() []string {
	d.t.Helper()
	var ids []string
	require.NoError(d.t, d.db.Select(&ids, `SELECT id::text FROM occurrences ORDER BY id`))
	return ids
}

// assertDeliveredOnce checks that the receiver saw every occurrence exactly
// once and nothing else.
func assertDeliveredOnce(t testing.TB, d *deployment, rc *receiver) {
	t.Helper()
	ids := d.occurrenceIDs()
	counts := rc.counts()
	var dup, lost []string
	for _, id := range ids {
		switch n := counts[id]; {
		case n == 0:
			lost = append(lost, id)
		case n > 1:
			dup = append(dup, fmt.Sprintf("%s×%d", id, n))
		}
	}
	if len(lost) > 0 || len(dup) > 0 {
		t.Errorf("of %d occurrences: %d never delivered %v, %d delivered more than once %v",
			len(ids), len(lost), first(lost, 5), len(dup), first(dup, 5))
	}
	if got, want := len(counts), len(ids); got != want {
		t.Errorf("receiver saw %d distinct webhook-ids, want %d (one per occurrence)", got, want)
	}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func formatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// readyBody fetches /ready of p: status code and decoded body.
func readyBody(p *proc) (int, map[string]string, error) {
	c := &http.Client{Timeout: 4 * time.Second}
	res, err := c.Get(p.url + "/ready")
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var body map[string]string
	err = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body, err
}
