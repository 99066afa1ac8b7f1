package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// benchClientsPerProc × GOMAXPROCS concurrent clients (48 on 2 cores).
const benchClientsPerProc = 24

// benchPostgres opens a store on a fresh schema with the production default
// pool size (database.max_open_conns = 20), not the tests' small pool.
func benchPostgres(t testing.TB) *repository.Store {
	t.Helper()
	ctx := context.Background()
	s, err := repository.OpenPostgres(ctx, repositorytest.MigratedPostgresSchema(t),
		repository.Options{MaxOpenConns: 20, ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate postgres: %v", err)
	}
	return s
}

// BenchmarkCreateEvent measures POST /events of one-time events over real
// HTTP on loopback, many clients at once, each create committing its event,
// tags and occurrence row before the answer. It reports creates/s and the
// p50/p99 latency a client sees.
func BenchmarkCreateEvent(b *testing.B) {
	for _, be := range []repositorytest.Backend{{Name: "sqlite", Open: repositorytest.SQLite},
		{Name: "postgres", Open: benchPostgres}} {
		b.Run(be.Name, func(b *testing.B) { benchmarkCreate(b, be.Open) })
	}
}

func benchmarkCreate(b *testing.B, open func(testing.TB) *repository.Store) {
	e := newEnv(b, open, withOptions(func(o *Options) {
		o.RateLimit = coordination.Limit{Rate: 1e9, Burst: 1e9}
	}))
	// The benchmark measures the server; checking each answer against the
	// document is the tests' job.
	e.skipOpenAPI = true
	token := e.mint("write", []string{"bench"})
	body, err := json.Marshal(eventBody("bench"))
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
	b.Cleanup(client.CloseIdleConnections)
	url := e.http.URL + "/events"

	var mu sync.Mutex
	var latencies []time.Duration
	b.SetParallelism(benchClientsPerProc)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		defer func() {
			mu.Lock()
			latencies = append(latencies, local...)
			mu.Unlock()
		}()
		for pb.Next() {
			req, err := http.NewRequest("POST", url, bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			t0 := time.Now()
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			msg, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			local = append(local, time.Since(t0))
			if res.StatusCode != http.StatusCreated {
				b.Errorf("status %d: %s", res.StatusCode, msg)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "creates/s")
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
}

// BenchmarkCreateEventsBatch measures POST /events/batch of 1,000 one-time
// events (each a realistic ~300-byte item) over real HTTP on loopback, with
// an Idempotency-Key as the import command sends; b.N counts batches. It
// reports events/s.
func BenchmarkCreateEventsBatch(b *testing.B) {
	for _, be := range []repositorytest.Backend{{Name: "sqlite", Open: repositorytest.SQLite},
		{Name: "postgres", Open: benchPostgres}} {
		b.Run(be.Name, func(b *testing.B) {
			e := newEnv(b, be.Open)
			e.skipOpenAPI = true
			items := make([]any, 1000)
			for i := range items {
				ev := eventBody("import", "shard")
				ev["metadata"] = map[string]any{"customer_id": 100000 + i, "plan": "pro"}
				items[i] = ev
			}
			body, err := json.Marshal(map[string]any{"events": items})
			if err != nil {
				b.Fatal(err)
			}
			client := &http.Client{}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				req, _ := http.NewRequest("POST", e.http.URL+"/events/batch", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+e.master)
				req.Header.Set("Idempotency-Key", "bench-"+time.Now().Format(time.RFC3339Nano)+"-"+string(rune('a'+i%26)))
				res, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				_ = res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Fatalf("status %d", res.StatusCode)
				}
			}
			b.ReportMetric(float64(b.N*len(items))/time.Since(start).Seconds(), "events/s")
		})
	}
}
