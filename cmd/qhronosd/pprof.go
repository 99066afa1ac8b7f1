package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"go.uber.org/zap"
)

// pprofAddrEnv names a loopback address to serve Go's profiler on, for
// profiling a benchmark (bench/targets.sh, BENCHMARKS.md #27): CPU and
// allocation profiles of the running server. Unset, nothing listens. It is an
// environment variable, not a config key, because it is a development aid:
// the profiles name the code, not the data, but they are no part of the API.
const pprofAddrEnv = "QHRONOS_PPROF_ADDR"

// startPprof serves /debug/pprof/ on $QHRONOS_PPROF_ADDR when set; the
// address must be loopback. The returned stop closes the listener.
func startPprof(log *zap.Logger) (stop func(), err error) {
	addr := os.Getenv(pprofAddrEnv)
	if addr == "" {
		return func() {}, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pprofAddrEnv, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%s: %q is not a loopback address", pprofAddrEnv, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pprofAddrEnv, err)
	}
	return servePprof(ln, log), nil
}

// servePprof serves the profiler on ln until the returned stop is called.
func servePprof(ln net.Listener, log *zap.Logger) (stop func()) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof listener", zap.Error(err))
		}
	}()
	log.Info("profiler on", zap.String("addr", ln.Addr().String()))
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
}
