package actions_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
)

// Receivers that never finish must not hold an attempt past its deadline,
// read more than the excerpt bound, or leave goroutines behind (TestMain
// checks the last with goleak).

const hostileTimeout = 1500 * time.Millisecond

// deadlineSlack is generous for a loaded 2-core machine; what matters is that
// the attempt does not run on with the receiver.
const deadlineSlack = 2 * time.Second

func hostileServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, release <-chan struct{})) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(w, r, release) }))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: frees the handlers
	return srv
}

func runHostile(t *testing.T, url string) actions.Outcome {
	t.Helper()
	req := baseRequest()
	req.Timeout = hostileTimeout
	start := time.Now()
	out := prepare(t, actions.NewWebhook(testConfig(t, nil)), map[string]string{"url": url}).Execute(context.Background(), req)
	if elapsed := time.Since(start); elapsed > hostileTimeout+deadlineSlack {
		t.Errorf("attempt took %s, want it to end by its %s deadline", elapsed, hostileTimeout)
	}
	return out
}

func TestHangingReceiverEndsAtDeadline(t *testing.T) {
	t.Parallel()
	srv := hostileServer(t, hold)
	out := runHostile(t, srv.URL)
	if out.OK() || !out.Retryable || !strings.Contains(out.Err.Error(), "timed out") {
		t.Errorf("outcome = {err %v, retryable %v}, want a retryable timeout", out.Err, out.Retryable)
	}
	if out.Duration < hostileTimeout {
		t.Errorf("Duration = %s, want at least the %s deadline", out.Duration, hostileTimeout)
	}
}

// TestTricklingHeadersEndAtDeadline: the status line arrives one byte per
// second, so the response never completes.
func TestTricklingHeadersEndAtDeadline(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done, stop := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for _, b := range []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") {
			if _, err := conn.Write([]byte{b}); err != nil {
				return
			}
			select {
			case <-tick.C:
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); ln.Close(); <-done })

	out := runHostile(t, "http://"+ln.Addr().String()+"/")
	if out.OK() || !out.Retryable || out.StatusCode != 0 {
		t.Errorf("outcome = {status %d, err %v, retryable %v}, want a retryable failure without status", out.StatusCode, out.Err, out.Retryable)
	}
}

// TestTricklingBodyKeepsStatus: the receiver accepted the delivery (200) but
// trickles its body; the attempt ends at the deadline with what arrived.
func TestTricklingBodyKeepsStatus(t *testing.T) {
	t.Parallel()
	srv := hostileServer(t, func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for range 60 {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-tick.C:
			case <-r.Context().Done():
				return
			case <-release:
				return
			}
		}
	})
	out := runHostile(t, srv.URL)
	require.NoError(t, out.Err)
	if out.StatusCode != http.StatusOK || !out.Truncated || !strings.HasPrefix(out.Excerpt, "x") || len(out.Excerpt) > 4 {
		t.Errorf("outcome = {status %d, excerpt %q, truncated %v}, want 200 with a short partial excerpt", out.StatusCode, out.Excerpt, out.Truncated)
	}
}

// gzipMember is one gzip member of n 'a' bytes; concatenated members form a
// valid gzip stream, so repeating it makes a bomb without building it.
func gzipMember(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(bytes.Repeat([]byte("a"), n))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// The two memory tests are not parallel so the allocation figure is theirs.

func TestEndlessBodyIsCutAtExcerptBound(t *testing.T) {
	chunk := bytes.Repeat([]byte("z"), 32<<10)
	srv := hostileServer(t, func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
		w.WriteHeader(http.StatusOK)
		for range 1 << 15 { // up to 1 GiB, the client leaves long before
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	out, allocated := measureAlloc(func() actions.Outcome { return runHostile(t, srv.URL) })
	require.NoError(t, out.Err)
	if got, want := len(out.Excerpt), actions.DefaultExcerptLimit; got != want || !out.Truncated {
		t.Errorf("excerpt = %d bytes (truncated %v), want %d, truncated", got, out.Truncated, want)
	}
	if allocated > 16<<20 {
		t.Errorf("allocated %d MiB reading an endless body, want a bounded amount", allocated>>20)
	}
}

func TestGzipBombIsDecodedWithinBound(t *testing.T) {
	member := gzipMember(t, 1<<20) // 1 MiB decoded, ~1 KiB on the wire
	srv := hostileServer(t, func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(http.StatusOK)
		for range 1 << 10 { // 1 GiB decoded
			if _, err := w.Write(member); err != nil {
				return
			}
		}
	})
	out, allocated := measureAlloc(func() actions.Outcome { return runHostile(t, srv.URL) })
	require.NoError(t, out.Err)
	if got, want := len(out.Excerpt), actions.DefaultExcerptLimit; got != want || !out.Truncated {
		t.Errorf("excerpt = %d bytes (truncated %v), want %d, truncated", got, out.Truncated, want)
	}
	if strings.Trim(out.Excerpt, "a") != "" {
		t.Errorf("excerpt is not the decoded body")
	}
	if allocated > 16<<20 {
		t.Errorf("allocated %d MiB decoding a gzip bomb, want a bounded amount", allocated>>20)
	}
}

func measureAlloc(f func() actions.Outcome) (actions.Outcome, uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out := f()
	runtime.ReadMemStats(&after)
	return out, after.TotalAlloc - before.TotalAlloc
}

func TestExcerptBoundAndDecoding(t *testing.T) {
	t.Parallel()
	gz := gzipMember(t, 12)
	gzBig := gzipMember(t, 1000)
	letters := make([]byte, 300)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range letters {
		letters[i] = byte('a' + rng.IntN(26))
	}
	var lz bytes.Buffer
	zw := gzip.NewWriter(&lz)
	zw.Write(letters)
	zw.Close()
	require.Greater(t, lz.Len(), 100, "incompressible enough")
	tests := []struct {
		name          string
		encoding      string
		body          []byte
		limit         int
		wantExcerpt   string
		wantTruncated bool
	}{
		{"fits", "", []byte("0123456789"), 10, "0123456789", false},
		{"one over", "", []byte("0123456789X"), 10, "0123456789", true},
		{"gzip fits", "gzip", gz, 64, "aaaaaaaaaaaa", false},
		{"gzip decoded over bound", "gzip", gzBig, 64, strings.Repeat("a", 64), true},
		{"gzip compressed over bound", "gzip", lz.Bytes(), 64, "", true},
		{"invalid UTF-8 and NUL made safe", "", []byte("ok\xff\x00!"), 64, "ok\uFFFD\uFFFD!", false},
		{"cut on a rune boundary", "", []byte("ééééé"), 5, "éé", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.encoding != "" {
					w.Header().Set("Content-Encoding", tc.encoding)
				}
				w.Write(tc.body)
			}))
			t.Cleanup(srv.Close)
			cfg := testConfig(t, func(c *actions.HTTPConfig) { c.ExcerptLimit = tc.limit })
			out := prepare(t, actions.NewWebhook(cfg), map[string]string{"url": srv.URL}).Execute(context.Background(), baseRequest())
			require.NoError(t, out.Err)
			if tc.name == "gzip compressed over bound" {
				// Whatever decoded from the first 64 compressed bytes.
				if !strings.HasPrefix(string(letters), out.Excerpt) || len(out.Excerpt) > 64 || !out.Truncated {
					t.Errorf("excerpt = %q (truncated %v), want a prefix of the body, truncated", out.Excerpt, out.Truncated)
				}
				return
			}
			if out.Excerpt != tc.wantExcerpt || out.Truncated != tc.wantTruncated {
				t.Errorf("excerpt = %q (truncated %v), want %q (truncated %v)", out.Excerpt, out.Truncated, tc.wantExcerpt, tc.wantTruncated)
			}
		})
	}
}
