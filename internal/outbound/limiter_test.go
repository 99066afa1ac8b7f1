package outbound_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/outbound"
)

func TestLimiterCapsConcurrencyPerDestination(t *testing.T) {
	t.Parallel()
	l := outbound.NewLimiter(2)
	ctx := context.Background()
	r1, err := l.Acquire(ctx, "a.example:443")
	require.NoError(t, err)
	r2, err := l.Acquire(ctx, "a.example:443")
	require.NoError(t, err)

	// Another destination is unaffected.
	rb, err := l.Acquire(ctx, "b.example:443")
	require.NoError(t, err)
	rb()

	// A third holder of a.example waits until a slot is released.
	got := make(chan func(), 1)
	go func() {
		r, err := l.Acquire(ctx, "a.example:443")
		if err == nil {
			got <- r
		}
	}()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	select {
	case <-got:
		t.Fatal("third acquire succeeded while two slots were held")
	case <-short.Done():
	}
	r1()
	r1() // a second release is harmless and frees nothing more
	select {
	case r3 := <-got:
		r3()
	case <-time.After(60 * time.Second):
		t.Fatal("third acquire did not proceed after a release")
	}
	r2()
}

func TestLimiterAcquireHonoursContext(t *testing.T) {
	t.Parallel()
	l := outbound.NewLimiter(1)
	r, err := l.Acquire(context.Background(), "a:80")
	require.NoError(t, err)
	defer r()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = l.Acquire(ctx, "a:80")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
}

func TestLimiterUnlimited(t *testing.T) {
	t.Parallel()
	l := outbound.NewLimiter(0)
	for range 100 {
		_, err := l.Acquire(context.Background(), "a:80")
		require.NoError(t, err)
	}
}

func TestDestination(t *testing.T) {
	t.Parallel()
	tests := []struct{ url, want string }{
		{"https://Hooks.Example.com/x", "hooks.example.com:443"},
		{"http://hooks.example.com/x", "hooks.example.com:80"},
		{"http://hooks.example.com:8080/", "hooks.example.com:8080"},
		{"http://[2001:db8::1]:9000/", "[2001:db8::1]:9000"},
	}
	for _, tc := range tests {
		got, err := outbound.Destination(tc.url)
		require.NoError(t, err)
		if got != tc.want {
			t.Errorf("Destination(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
