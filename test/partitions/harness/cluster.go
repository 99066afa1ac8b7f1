package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for the harness's own queries
	"github.com/jmoiron/sqlx"

	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// Cluster is one production deployment spread over hosts: a PostgreSQL
// schema and a Redis prefix of its own, the receivers, and one qhronosd per
// host, each reaching all three through its own links.
type Cluster struct {
	t         testing.TB
	Net       *Network
	DB        *sqlx.DB // the harness's own connection, never cut
	Receivers *Receivers
	Instances []*Instance
	// ReceiverPort is the port of every instance's receiver link: the
	// webhook URL is http://ReceiverHost:ReceiverPort/h/KEY everywhere.
	ReceiverPort int
	token        string
	env          map[string]string
}

// Instance is one qhronosd on its host.
type Instance struct {
	Name            string
	Host            *Host
	PG, Redis, Recv *Link
	URL             string // its API, reached over its link

	c      *Cluster
	env    map[string]string
	cmd    *exec.Cmd
	stderr *qhronostest.Buffer
	done   chan struct{}
}

// Settings are the deployment's: short leases, rescues and backoffs so
// faults heal within seconds, every send logged (debug, JSON). The lease
// (5 s, half the default) outlasts 4 s of CPU starvation: with 3 s, two
// copies of the suite side by side lapsed leases of sends under way.
func settings(t testing.TB, token, cidr string) map[string]string {
	return map[string]string{
		"QHRONOS_DATABASE_CONNECT_TIMEOUT":       "3s",
		"QHRONOS_DATABASE_MAX_OPEN_CONNS":        "8",
		"QHRONOS_AUTH_MASTER_TOKEN":              token,
		"QHRONOS_AUTH_JWT_SECRET":                qhronostest.RandomHex(t, 32),
		"QHRONOS_HMAC_DEFAULT_SECRET":            qhronostest.RandomHex(t, 32),
		"QHRONOS_SECRETS_ENCRYPTION_KEY":         qhronostest.RandomHex(t, 32),
		"QHRONOS_OUTBOUND_ALLOW_CIDRS":           cidr,
		"QHRONOS_SCHEDULER_LEASE":                "5s",
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
		"QHRONOS_LOG_LEVEL":                      "debug",
		"QHRONOS_LOG_FORMAT":                     "json",
	}
}

// NewCluster makes n hosts and starts one instance on each; extra
// overrides settings (QHRONOS_* name, value pairs).
func NewCluster(t testing.TB, n int, extra ...string) *Cluster {
	t.Helper()
	nw := NewNetwork(t, n)
	schemaURL := repositorytest.MigratedPostgresSchema(t)
	_, prefix := coordinationtest.RedisClient(t)
	db, err := sqlx.Open("pgx", schemaURL)
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	c := &Cluster{t: t, Net: nw, DB: db, Receivers: NewReceivers(t), token: qhronostest.RandomHex(t, 32)}
	c.env = settings(t, c.token, nw.CIDR())
	c.env["QHRONOS_REDIS_PREFIX"] = prefix
	for i := 0; i+1 < len(extra); i += 2 {
		c.env[extra[i]] = extra[i+1]
	}
	pgURL, err := url.Parse(schemaURL)
	if err != nil {
		t.Fatalf("database url: %v", err)
	}
	redisURL := os.Getenv("QHRONOS_TEST_REDIS_URL")
	if redisURL == "" {
		redisURL = coordinationtest.DefaultRedisURL
	}
	rURL, err := url.Parse(redisURL)
	if err != nil {
		t.Fatalf("redis url: %v", err)
	}
	px := NewProxies()
	for i, h := range nw.Hosts {
		in := &Instance{Name: fmt.Sprintf("q%d", i), Host: h, c: c, URL: "http://" + net.JoinHostPort(h.IP, "8080")}
		in.PG = px.Link(t, in.Name+"-pg", net.JoinHostPort(h.HostIP, "0"), pgURL.Host)
		in.Redis = px.Link(t, in.Name+"-redis", net.JoinHostPort(h.HostIP, "0"), rURL.Host)
		in.Recv = px.Link(t, in.Name+"-recv", net.JoinHostPort(h.HostIP, strconv.Itoa(c.ReceiverPort)), c.Receivers.Addr)
		if c.ReceiverPort == 0 {
			_, port, _ := net.SplitHostPort(in.Recv.Addr())
			c.ReceiverPort, _ = strconv.Atoi(port)
		}
		u := *pgURL
		u.Host = in.PG.Addr()
		r := *rURL
		r.Host = in.Redis.Addr()
		in.env = map[string]string{"QHRONOS_DATABASE_URL": u.String(), "QHRONOS_REDIS_URL": r.String(),
			"QHRONOS_SERVER_ADDR": net.JoinHostPort(h.IP, "8080")}
		c.Instances = append(c.Instances, in)
	}
	// The first instance migrates the schema alone; the others join it.
	c.Instances[0].start()
	for _, in := range c.Instances[1:] {
		in.start()
	}
	return c
}

// start launches the instance in its namespace and waits until /ready.
func (in *Instance) start() {
	t := in.c.t
	t.Helper()
	cmd := in.Host.Command(qhronostest.Binary(t), "serve")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + cmd.Dir}
	for _, env := range []map[string]string{in.c.env, in.env} {
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	in.stderr = &qhronostest.Buffer{}
	cmd.Stderr, cmd.Stdout = in.stderr, io.Discard
	coordinationtest.DieWithTest(cmd) // ip(8) execs qhronosd: the signal holds for it
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", in.Name, err)
	}
	in.cmd, in.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(in.done) }()
	t.Cleanup(func() {
		in.kill()
		if t.Failed() {
			t.Logf("---- %s stderr (last 6 KiB) ----\n%s", in.Name, qhronostest.Tail(in.stderr.String(), 6<<10))
		}
	})
	hc := &http.Client{Timeout: time.Second}
	ready := qhronostest.Eventually(60*time.Second, in.done, func() bool {
		res, err := hc.Get(in.URL + "/ready")
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	if !ready {
		t.Fatalf("%s not ready:\n%s", in.Name, qhronostest.Tail(in.stderr.String(), 4<<10))
	}
}

func (in *Instance) kill() {
	select {
	case <-in.done:
	default:
		_ = in.cmd.Process.Kill()
		<-in.done
	}
}

// Stop ends the instance with SIGTERM (its drain logs what it still sends)
// and waits; after 30 s it is killed.
func (in *Instance) Stop() {
	select {
	case <-in.done:
		return
	default:
	}
	_ = in.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-in.done:
	case <-time.After(30 * time.Second):
		in.kill()
	}
}

// Log is everything the instance wrote to stderr.
func (in *Instance) Log() string { return in.stderr.String() }

// EventSpec is one one-time webhook event of the load.
type EventSpec struct {
	Key string
	At  time.Time
}

// WebhookURL is the URL the event with key posts to.
func (c *Cluster) WebhookURL(key string) string {
	return fmt.Sprintf("http://%s:%d/h/%s", ReceiverHost, c.ReceiverPort, key)
}

// Create creates the events through in, 1,000 a batch, and returns each
// key's event id.
func (c *Cluster) Create(in *Instance, specs []EventSpec) map[string]string {
	c.t.Helper()
	ids := make(map[string]string, len(specs))
	hc := &http.Client{Timeout: 60 * time.Second}
	for from := 0; from < len(specs); from += 1000 {
		chunk := specs[from:min(from+1000, len(specs))]
		events := make([]map[string]any, len(chunk))
		for i, s := range chunk {
			events[i] = map[string]any{"name": s.Key, "start_time": s.At.UTC().Format(time.RFC3339Nano),
				"webhook": c.WebhookURL(s.Key), "tags": []string{"partitions"}}
		}
		body, _ := json.Marshal(map[string]any{"events": events})
		req, _ := http.NewRequest(http.MethodPost, in.URL+"/events/batch", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Prefer", "return=minimal")
		res, err := hc.Do(req)
		if err != nil {
			c.t.Fatalf("create events: %v", err)
		}
		out, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			c.t.Fatalf("create events: status %d: %s", res.StatusCode, out)
		}
		var got struct {
			Results []struct {
				Index  int    `json:"index"`
				Status int    `json:"status"`
				ID     string `json:"id"`
				Error  string `json:"error"`
			} `json:"results"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			c.t.Fatalf("create events: %v: %s", err, qhronostest.Tail(string(out), 512))
		}
		for _, r := range got.Results {
			if r.Status != http.StatusCreated || r.ID == "" {
				c.t.Fatalf("create event %d: status %d: %s", from+r.Index, r.Status, r.Error)
			}
			ids[chunk[r.Index].Key] = r.ID
		}
	}
	return ids
}

// WaitCompleted waits until n occurrences exist and all are completed; it
// returns false at deadline.
func (c *Cluster) WaitCompleted(n int, deadline time.Time) bool {
	return qhronostest.Eventually(time.Until(deadline), nil, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		var done int
		err := c.DB.GetContext(ctx, &done, `SELECT count(*) FROM occurrences WHERE status = 'completed'`)
		return err == nil && done >= n
	})
}

// Counts is the occurrences per status, for messages.
func (c *Cluster) Counts() map[string]int {
	var rows []struct {
		Status string `db:"status"`
		N      int    `db:"n"`
	}
	out := map[string]int{}
	if err := c.DB.Select(&rows, `SELECT status, count(*) AS n FROM occurrences GROUP BY status`); err != nil {
		out["error: "+err.Error()] = 1
	}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out
}

// History stops every instance (so their logs are whole) and gathers the
// run's history: specs are the events the load created, ids their event ids.
func (c *Cluster) History(scenario string, specs []EventSpec, ids map[string]string, faultStart, healed time.Time) *History {
	c.t.Helper()
	for _, in := range c.Instances {
		in.Stop()
	}
	h := &History{Scenario: scenario, FaultStart: faultStart, Healed: healed, Receipts: c.Receivers.Receipts()}
	var occs []struct {
		ID      string    `db:"id"`
		EventID string    `db:"event_id"`
		At      time.Time `db:"scheduled_at"`
		Status  string    `db:"status"`
	}
	if err := c.DB.Select(&occs, `SELECT id::text, event_id::text, scheduled_at, status FROM occurrences`); err != nil {
		c.t.Fatalf("read occurrences: %v", err)
	}
	byEvent := make(map[string]int, len(occs))
	for i, o := range occs {
		byEvent[o.EventID] = i
	}
	for _, s := range specs {
		d := Due{Key: s.Key, EventID: ids[s.Key], ScheduledAt: s.At}
		if i, ok := byEvent[d.EventID]; ok {
			d.OccurrenceID, d.ScheduledAt, d.Status = occs[i].ID, occs[i].At, occs[i].Status
		}
		h.Due = append(h.Due, d)
	}
	if err := c.DB.Select(&h.Attempts, `SELECT occurrence_id::text AS occurrenceid, attempt, started_at AS startedat,
		outcome FROM attempts`); err != nil {
		c.t.Fatalf("read attempts: %v", err)
	}
	for _, in := range c.Instances {
		sends, bad := ParseSends(in.Name, in.Log())
		for _, l := range bad {
			c.t.Errorf("%s: unreadable send line: %s", in.Name, l)
		}
		h.Sends = append(h.Sends, sends...)
	}
	return h
}
