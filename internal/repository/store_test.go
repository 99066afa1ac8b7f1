package repository_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// freeLoopbackAddr is a loopback address nothing listens on: connections to
// it are refused at once.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func TestUnavailableWhenPostgresIsUnreachable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	raw := "postgres://qhronos:s3cret-pw@" + freeLoopbackAddr(t) + "/qhronos?sslmode=disable"
	_, err := repository.OpenPostgres(ctx, raw, repository.Options{ConnectTimeout: 2 * time.Second})
	require.ErrorIs(t, err, model.ErrUnavailable)
	require.NotContains(t, err.Error(), "s3cret-pw", "the password stays out of the error")
}

// proxy forwards loopback connections to a PostgreSQL server until stopped;
// stopping it cuts every forwarded connection and refuses new ones, which is
// how the database goes away for one store without touching the server.
type proxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{l: l, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
}

// stop refuses new connections and cuts the open ones; it returns once
// every forwarding goroutine has ended.
func (p *proxy) stop() {
	_ = p.l.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func TestUnavailableWhenPostgresGoesAway(t *testing.T) {
	t.Parallel()
	schemaURL := repositorytest.PostgresSchema(t) // a private schema; skips without a server
	u, err := url.Parse(schemaURL)
	require.NoError(t, err)
	p := startProxy(t, u.Host)
	u.Host = p.l.Addr().String()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := repository.OpenPostgres(ctx, u.String(), repository.Options{MaxOpenConns: 2, ConnectTimeout: 2 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, err = s.Migrate(ctx)
	require.NoError(t, err)
	e := newEvent()
	mustCreate(t, s, e)

	p.stop()

	_, err = s.GetEvent(ctx, e.ID)
	require.ErrorIs(t, err, model.ErrUnavailable, "a read: %v", err)
	err = s.CreateEvent(ctx, newEvent())
	require.ErrorIs(t, err, model.ErrUnavailable, "a write: %v", err)
	_, err = s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: e.ID, LeaseToken: "tok",
		Status: model.OccurrenceCompleted, Now: t0}})
	require.ErrorIs(t, err, model.ErrUnavailable, "a write in a transaction: %v", err)
	require.NoError(t, ctx.Err(), "failing took no waiting for timeouts")
}

func TestUnavailableOnceTheStoreIsClosed(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		require.NoError(t, s.Close())

		_, err := s.GetEvent(ctx, e.ID)
		require.ErrorIs(t, err, model.ErrUnavailable, "a read: %v", err)
		require.False(t, errors.Is(err, model.ErrNotFound))
		err = s.CreateEvent(ctx, newEvent())
		require.ErrorIs(t, err, model.ErrUnavailable, "a write: %v", err)
	})
}

func TestAnswersAreNotUnavailable(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		_, err := s.GetEvent(ctx, "00000000-0000-0000-0000-000000000001")
		require.ErrorIs(t, err, model.ErrNotFound)
		require.NotErrorIs(t, err, model.ErrUnavailable)

		e := newEvent()
		mustCreate(t, s, e)
		err = s.CreateEvent(ctx, e)
		require.ErrorIs(t, err, model.ErrConflict)
		require.NotErrorIs(t, err, model.ErrUnavailable)
		require.False(t, strings.Contains(err.Error(), model.ErrUnavailable.Error()))
	})
}

// A client that goes silent inside a transaction (cut off by a partition:
// its server still sees the connection open) releases its row locks once
// the idle-in-transaction timeout passes, so the rows it held are free for
// the other instances instead of locked until the partition heals.
func TestIdleTransactionReleasesItsLocks(t *testing.T) {
	t.Parallel()
	schemaURL := repositorytest.PostgresSchema(t)
	ctx := context.Background()
	s, err := repository.OpenPostgres(ctx, schemaURL, repository.Options{MaxOpenConns: 2, IdleInTransaction: time.Second})
	require.NoError(t, err)
	defer s.Close()
	other, err := repository.OpenPostgres(ctx, schemaURL, repository.Options{MaxOpenConns: 2})
	require.NoError(t, err)
	defer other.Close()
	_, err = other.DB().ExecContext(ctx, `CREATE TABLE idle_locks (id int PRIMARY KEY); INSERT INTO idle_locks VALUES (1)`)
	require.NoError(t, err)

	tx, err := s.DB().BeginTxx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, `SELECT id FROM idle_locks WHERE id = 1 FOR UPDATE`)
	require.NoError(t, err)
	// The client now says nothing more, as if cut off.

	locked := func() bool {
		var ids []int
		err := other.DB().SelectContext(ctx, &ids, `SELECT id FROM idle_locks FOR UPDATE SKIP LOCKED`)
		require.NoError(t, err)
		return len(ids) == 0
	}
	require.True(t, locked(), "the open transaction holds the row")
	if !qhronostest.Eventually(30*time.Second, nil, func() bool { return !locked() }) {
		t.Fatal("the row is still locked 30 s after its transaction went idle; want it free after about 1 s")
	}
}

// A server that turns connections away because every slot is taken (here a
// role's connection limit, the same SQLSTATE 53300 as max_connections) is
// waited for within the connect timeout, and a query refused that way is
// unavailable (503), not an internal error.
func TestOpenWaitsForAConnectionSlot(t *testing.T) {
	ctx := context.Background()
	schemaURL := repositorytest.PostgresSchema(t)
	admin, err := repository.OpenPostgres(ctx, schemaURL, repository.Options{MaxOpenConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	role := "qtest_role_" + qhronostest.RandomHex(t, 6)
	_, err = admin.DB().ExecContext(ctx, `CREATE ROLE `+role+` LOGIN CONNECTION LIMIT 1`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.DB().ExecContext(context.Background(), `DROP ROLE `+role) })
	u, err := url.Parse(schemaURL)
	require.NoError(t, err)
	u.User = url.User(role)
	roleURL := u.String()

	holder, err := repository.OpenPostgres(ctx, roleURL, repository.Options{MaxOpenConns: 1})
	require.NoError(t, err, "the role's one slot")

	// Every slot stays taken: refused after the timeout, as unavailable.
	_, err = repository.OpenPostgres(ctx, roleURL, repository.Options{ConnectTimeout: time.Second})
	require.ErrorIs(t, err, model.ErrUnavailable)

	// The slot frees while the next one waits: it connects.
	opened := make(chan error, 1)
	go func() {
		s, err := repository.OpenPostgres(ctx, roleURL, repository.Options{ConnectTimeout: time.Minute})
		if err == nil {
			_ = s.Close()
		}
		opened <- err
	}()
	// The opener is most likely refused at least once before the slot frees
	// (an opener that connects after it passes too): no pass depends on the
	// pause, so a busy machine cannot fail it.
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, holder.Close())
	select {
	case err := <-opened:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("no connection within a minute of the slot freeing")
	}
}

// The hot path's statements by key are planned as lookups by key: from a
// pool of 8 connections on the keyed pool, whose sessions carry the settings
// (so each statement runs on its own, one round trip); on a smaller pool in a
// transaction that sets them. Every other statement plans as the server is
// configured.
func TestStatementsByKeyArePlannedByKey(t *testing.T) {
	t.Parallel()
	schemaURL := repositorytest.PostgresSchema(t) // skips without a server
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	byKey := map[string]string{"enable_seqscan": "off", "enable_bitmapscan": "off", "enable_hashjoin": "off",
		"enable_mergejoin": "off", "max_parallel_workers_per_gather": "0", "plan_cache_mode": "force_generic_plan"}
	for _, tc := range []struct {
		conns int
		keyed bool
	}{{conns: 8, keyed: true}, {conns: 20, keyed: true}, {conns: 4, keyed: false}} {
		s, err := repository.OpenPostgres(ctx, schemaURL, repository.Options{MaxOpenConns: tc.conns})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		for range 3 { // several connections of the pool
			require.NoError(t, s.ByKey(ctx, func(tx *repository.Store) error {
				got, err := tx.PlanSettings(ctx)
				require.NoError(t, err)
				require.Equal(t, byKey, got, "%d connections", tc.conns)
				var pooled string // a session of the pool the statements run on, outside any transaction
				require.NoError(t, tx.DB().QueryRowContext(ctx, `SELECT current_setting('enable_seqscan')`).Scan(&pooled))
				require.Equal(t, tc.keyed, pooled == "off", "%d connections: the pool's sessions plan by key", tc.conns)
				return nil
			}))
		}
		got, err := s.PlanSettings(ctx)
		require.NoError(t, err)
		require.Equal(t, "on", got["enable_seqscan"], "%d connections: other statements plan as configured", tc.conns)
		require.NotEqual(t, "force_generic_plan", got["plan_cache_mode"])
	}
}
