package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
)

// scripted answers each request with the next of its statuses (the last
// one repeats) and records the Idempotency-Key of each.
type scripted struct {
	mu       sync.Mutex
	statuses []int
	header   http.Header
	body     string
	keys     []string
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.keys = append(s.keys, r.Header.Get("Idempotency-Key"))
	status := s.statuses[min(len(s.keys), len(s.statuses))-1]
	s.mu.Unlock()
	for k, v := range s.header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	if status >= 400 {
		_, _ = w.Write([]byte(`{"error":"start_time: must be in the future","field":"start_time"}`))
		return
	}
	_, _ = w.Write([]byte(s.body))
}

func (s *scripted) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.keys...)
}

func newScripted(t *testing.T, s *scripted) *client.Client {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, client.WithToken("t"), client.WithBackoff(time.Millisecond, time.Second))
	require.NoError(t, err)
	return c
}

func TestTypedErrors(t *testing.T) {
	t.Parallel()
	s := &scripted{statuses: []int{400}}
	_, err := newScripted(t, s).Events.Get(context.Background(), "x")
	var apiErr *client.APIError
	require.ErrorAs(t, err, &apiErr)
	if apiErr.StatusCode != 400 || apiErr.Field != "start_time" || apiErr.Message != "start_time: must be in the future" {
		t.Errorf("APIError = %+v", apiErr)
	}
	require.ErrorIs(t, err, client.ErrBadRequest)
	require.NotErrorIs(t, err, client.ErrNotFound)
	if len(s.calls()) != 1 {
		t.Errorf("a 400 was retried: %d calls", len(s.calls()))
	}

	s = &scripted{statuses: []int{404}}
	_, err = newScripted(t, s).Occurrences.Get(context.Background(), "x")
	require.ErrorIs(t, err, client.ErrNotFound)
}

// A 429 is retried after its Retry-After; when retries run out the error
// carries the delay.
func TestRateLimitedCarriesRetryAfter(t *testing.T) {
	t.Parallel()
	s := &scripted{statuses: []int{429}, header: http.Header{"Retry-After": {"7"}}}
	_, err := newScripted(t, s).Tokens.List(context.Background())
	var apiErr *client.APIError
	require.ErrorAs(t, err, &apiErr)
	require.ErrorIs(t, err, client.ErrRateLimited)
	if apiErr.RetryAfter != 7*time.Second {
		t.Errorf("RetryAfter = %s, want 7s", apiErr.RetryAfter)
	}
	if n := len(s.calls()); n != 1 {
		t.Errorf("a Retry-After longer than the client waits was retried: %d calls", n)
	}

	s = &scripted{statuses: []int{429, 200}, header: http.Header{"Retry-After": {"1"}}, body: `[]`}
	c := newScripted(t, s)
	began := time.Now()
	_, err = c.Tokens.List(context.Background())
	require.NoError(t, err)
	if n := len(s.calls()); n != 2 {
		t.Errorf("calls = %d, want 2 (one retry after the 429)", n)
	}
	if waited := time.Since(began); waited < time.Second {
		t.Errorf("retried after %s, before the server's Retry-After of 1s", waited)
	}
}

// A create is retried on 503 with the same Idempotency-Key, so the server
// can replay instead of creating twice.
func TestCreateRetriesWithOneIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := &scripted{statuses: []int{503, 502, 201}, body: `{"id":"e1","name":"n"}`}
	ev, err := newScripted(t, s).Events.Create(context.Background(), client.EventInput{Name: client.Ptr("n")})
	require.NoError(t, err)
	require.Equal(t, "e1", ev.ID)
	keys := s.calls()
	require.Len(t, keys, 3)
	if keys[0] == "" || keys[1] != keys[0] || keys[2] != keys[0] {
		t.Errorf("Idempotency-Keys of the attempts = %q, want one non-empty key repeated", keys)
	}

	s = &scripted{statuses: []int{503, 200}, body: `{}`}
	_, err = newScripted(t, s).Events.Create(context.Background(), client.EventInput{}, client.IdempotencyKey("mine"))
	require.NoError(t, err)
	if keys := s.calls(); keys[0] != "mine" || keys[1] != "mine" {
		t.Errorf("caller's key not kept: %q", keys)
	}
}

// With retries off a create sends no key of its own: nothing to protect.
func TestNoRetriesNoAutomaticKey(t *testing.T) {
	t.Parallel()
	s := &scripted{statuses: []int{503}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, client.WithRetries(0))
	require.NoError(t, err)
	_, err = c.Events.Create(context.Background(), client.EventInput{})
	require.ErrorIs(t, err, client.ErrUnavailable)
	require.Equal(t, []string{""}, s.calls())
}

// A call that is not idempotent is not retried after the server may have
// acted on it.
func TestReplayIsNotRetried(t *testing.T) {
	t.Parallel()
	s := &scripted{statuses: []int{503, 200}, body: `{}`}
	_, err := newScripted(t, s).Occurrences.Replay(context.Background(), "o1")
	require.ErrorIs(t, err, client.ErrUnavailable)
	if n := len(s.calls()); n != 1 {
		t.Errorf("replay was retried: %d calls", n)
	}
}

func TestCancelledContextStopsRetries(t *testing.T) {
	t.Parallel()
	s := &scripted{statuses: []int{503}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, client.WithBackoff(time.Hour, 2*time.Hour))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = c.Events.Get(ctx, "x")
	require.True(t, errors.Is(err, client.ErrUnavailable), "got %v", err)
	require.Len(t, s.calls(), 1)
}

func TestNewRefusesABadURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "localhost:8080", "ftp://x", "http://"} {
		if _, err := client.New(u); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
}
