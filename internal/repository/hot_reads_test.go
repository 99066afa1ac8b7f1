package repository_test

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// BenchmarkEventsByID reads a dispatcher's batch of 256 events by id on
// PostgreSQL, as the due loop does for the rows it fires.
func BenchmarkEventsByID(b *testing.B) {
	s := repositorytest.Postgres(b)
	ctx := context.Background()
	ids := make([]string, 256)
	for i := range ids {
		e := newEvent()
		e.HMACSecret = []byte("0123456789abcdef0123456789abcdef")
		if err := s.CreateEvent(ctx, e); err != nil {
			b.Fatal(err)
		}
		ids[i] = e.ID
	}
	b.ReportAllocs()
	before := processCPU(b)
	for b.Loop() {
		got, err := s.EventsByID(ctx, ids)
		if err != nil || len(got) != len(ids) {
			b.Fatalf("read %d events: %v", len(got), err)
		}
	}
	// The wall time includes PostgreSQL's; the process's own CPU is what
	// decoding costs qhronosd.
	b.ReportMetric(float64((processCPU(b)-before).Nanoseconds())/float64(b.N*len(ids)), "cpu-ns/event")
}

// processCPU is the CPU time (user and system) this process used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The hot path's reads scan through pgx on a pooled connection of their
// own: one whose session the server ended (a restart, a cut) must be
// dropped and the read tried on another, not reported as a failed read
// (through database/sql the first read after a restart failed).
func TestHotReadsSurviveTheirPooledSessionsEnding(t *testing.T) {
	ctx := context.Background()
	app := "qhronos-test-" + uuid.NewString()[:8]
	s, err := repository.OpenPostgres(ctx, repositorytest.PostgresSchema(t),
		repository.Options{MaxOpenConns: 8, ConnectTimeout: 5 * time.Second, ApplicationName: app})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, err = s.Migrate(ctx)
	require.NoError(t, err)
	e := newEvent()
	mustCreate(t, s, e)
	for range 4 { // sessions opened and back in the pool
		got, err := s.EventsByID(ctx, []string{e.ID})
		require.NoError(t, err)
		require.Len(t, got, 1)
	}

	admin, err := sqlx.Open("pgx", repositorytest.PostgresURL())
	require.NoError(t, err)
	defer admin.Close()
	var ended int
	require.NoError(t, admin.Get(&ended, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1`, app))
	require.Positive(t, ended, "no session of the store was found to end")
	// pg_terminate_backend only signals: wait until the sessions are gone.
	require.Eventually(t, func() bool {
		var left int
		return admin.Get(&left, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app) == nil &&
			left == 0
	}, 30*time.Second, 20*time.Millisecond)

	got, err := s.EventsByID(ctx, []string{e.ID})
	require.NoError(t, err, "a read on a pool whose sessions ended")
	require.Equal(t, e.Name, got[e.ID].Name)
}

// BenchmarkRecordOutcomes writes outcome batches of 64 completed
// deliveries with their attempts on PostgreSQL, as the outcome writer does
// in a burst (fenced by a claim's lease token where the dispatcher's are
// fenced by their slot's epoch: the same statements); cpu-ns/outcome is this
// process's CPU for the writes alone (the rows' creation and claim left out).
func BenchmarkRecordOutcomes(b *testing.B) {
	s := repositorytest.Postgres(b)
	ctx := context.Background()
	const batch = 64
	var cpu time.Duration
	instant := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for range batch {
			e := newEvent()
			e.StartTime, instant = instant, instant.Add(time.Millisecond)
			if err := s.CreateEvent(ctx, e, model.Planned{At: e.StartTime, Status: model.OccurrencePending}); err != nil {
				b.Fatal(err)
			}
		}
		got, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: instant, Limit: batch, Owner: "bench", Token: "tok",
			LeaseUntil: instant.Add(time.Minute)})
		if err != nil || len(got) != batch {
			b.Fatalf("claimed %d of %d: %v", len(got), batch, err)
		}
		recs := make([]repository.OutcomeRecord, batch)
		for i, o := range got {
			code, req := 200, `{"method":"POST","url":"http://127.0.0.1:18089/hook","body":"{}"}`
			recs[i] = repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok", Status: model.OccurrenceCompleted,
				StatusCode: &code, Now: instant, EventID: o.EventID, ActionType: "webhook", Ran: true, LastStatus: "completed",
				WholeSeries: true, Attempt: &model.Attempt{OccurrenceID: o.ID, EventID: o.EventID, Attempt: 1,
					StartedAt: instant, Outcome: "completed", StatusCode: &code, ScheduledAt: o.ScheduledAt, RequestJSON: &req}}
		}
		runtime.GC() // the setup's garbage is not the write's to collect
		b.StartTimer()
		before := processCPU(b)
		res, err := s.RecordOutcomes(ctx, recs)
		cpu += processCPU(b) - before
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r != nil {
				b.Fatal(r)
			}
		}
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*batch), "cpu-ns/outcome")
}
