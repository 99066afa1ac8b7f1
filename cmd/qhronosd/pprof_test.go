package main

import (
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// The profiler listens only when asked, and only on loopback.
func TestStartPprof(t *testing.T) {
	t.Setenv(pprofAddrEnv, "")
	stop, err := startPprof(zap.NewNop())
	require.NoError(t, err)
	stop()

	for _, addr := range []string{"0.0.0.0:0", "example.com:6060", "6060"} {
		t.Setenv(pprofAddrEnv, addr)
		_, err := startPprof(zap.NewNop())
		require.ErrorContains(t, err, pprofAddrEnv, addr)
	}

	t.Setenv(pprofAddrEnv, "127.0.0.1:0")
	stop, err = startPprof(zap.NewNop())
	require.NoError(t, err)
	stop()
}

// A profile is served on the listener.
func TestPprofServes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	stop := servePprof(ln, zap.NewNop())
	defer stop()
	res, err := http.Get("http://" + ln.Addr().String() + "/debug/pprof/cmdline")
	require.NoError(t, err)
	defer func() { _ = res.Body.Close() }()
	_, _ = io.Copy(io.Discard, res.Body)
	require.Equal(t, http.StatusOK, res.StatusCode)
}
