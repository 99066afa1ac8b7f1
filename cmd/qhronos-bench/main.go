// Command qhronos-bench measures a Qhronos server end to end: it creates
// one-time webhook events due at chosen instants, receives the deliveries on
// loopback receivers it runs itself, and reports create rate, deliveries/s,
// lateness percentiles, duplicates and losses. It speaks only the public
// HTTP API, so it can measure the original Qhronos as well as this one.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/qhronos/qhronos/internal/buildinfo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, time.Now)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitUnclean = 3
)

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, now func() time.Time) int {
	if len(args) == 1 && (args[0] == "version" || args[0] == "-version" || args[0] == "--version") {
		_, _ = fmt.Fprintln(stdout, "qhronos-bench", buildinfo.Get())
		return exitOK
	}
	cfg, err := parseConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "qhronos-bench:", err)
		return exitUsage
	}
	rep, err := bench(ctx, cfg, stderr, now)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "qhronos-bench:", err)
		return exitError
	}
	if cfg.JSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteTable(stdout)
	}
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "qhronos-bench:", err)
		return exitError
	}
	if !rep.Clean() {
		return exitUnclean
	}
	return exitOK
}

// bench runs one measurement: plan, receive, create, wait, account.
func bench(ctx context.Context, cfg Config, stderr io.Writer, now func() time.Time) (*Report, error) {
	server, err := checkLoopbackServer(ctx, cfg.Server, resolveHost)
	if err != nil {
		return nil, err
	}
	host, err := checkLoopbackHost(cfg.ReceiverHost)
	if err != nil {
		return nil, err
	}
	instants, err := planInstants(cfg.Mode, now(), cfg.DueIn, cfg.Events, cfg.BurstWindow, cfg.Rate, cfg.Duration)
	if err != nil {
		return nil, err
	}
	first, last := instants[0], instants[len(instants)-1]
	rep := &Report{Date: now().UTC().Format(time.RFC3339), Server: server.String(), Mode: cfg.Mode,
		Receivers: cfg.Receivers, EventsPlanned: len(instants),
		FirstDue: first.UTC().Format(time.RFC3339Nano), LastDue: last.UTC().Format(time.RFC3339Nano),
		LoadBefore: loadAverage()}
	if cfg.Mode == ModeSteady {
		rep.Rate, rep.DurationSec = cfg.Rate, cfg.Duration.Seconds()
	} else {
		rep.BurstWindowMS = ms(cfg.BurstWindow)
	}

	rec := NewFanoutRecorder(len(instants), cfg.Subscribers)
	h := &receiverHandler{rec: rec, now: now}
	if cfg.VerifySignature != "" {
		h.verifier = newSignatureVerifier(cfg.VerifySignature)
		rep.SignatureChecked = true
	}
	if cfg.Receipts != "" {
		if h.receipts, err = openReceiptLog(cfg.Receipts); err != nil {
			return nil, err
		}
	}
	rs, err := startReceivers(host, cfg.Receivers, h)
	if err != nil {
		if h.receipts != nil {
			_ = h.receipts.close()
		}
		return nil, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rs.close(sctx)
		if h.receipts != nil {
			if err := h.receipts.close(); err != nil {
				_, _ = fmt.Fprintln(stderr, "qhronos-bench:", err)
			}
		}
	}()

	client := newAPIClient(30*time.Second, cfg.CreateConcurrency*2)
	runID := newRunID()
	cr := &creator{client: client, server: server, token: cfg.Token, runID: runID,
		tags: append(append([]string{}, cfg.Tags...), "run-"+runID), now: now, lead: 20 * time.Millisecond}

	if cfg.Subscribers > 0 {
		if cr.topic, err = setupFanout(ctx, client, server, cfg, runID, rs.urls); err != nil {
			return nil, err
		}
	}
	var memory *rssSampler
	if cfg.ServerPID > 0 {
		memory = startRSSSampler(cfg.ServerPID, rssEvery)
	}
	onCreated := rec.Expect
	var probeIDs *createdIDs
	if cfg.ProbeRate > 0 {
		probeIDs = &createdIDs{}
		onCreated = func(id string) { rec.Expect(id); probeIDs.add(id) }
	}

	// Creation may not run past the last instant: anything later is skipped.
	cctx, cancelCreate := context.WithDeadline(ctx, last)
	var created atomic.Int64
	stopProgress := progress(stderr, "created", &created, int64(len(instants)))
	_, _ = fmt.Fprintf(stderr, "qhronos-bench: run %s: creating %d events on %s, first due %s\n", runID,
		len(instants), server, first.UTC().Format(time.RFC3339Nano))
	res := cr.createAll(cctx, instants, rs.urls, cfg.CreateConcurrency, onCreated, &created)
	cancelCreate()
	stopProgress()
	rec.Seal()
	rep.fillCreates(res)
	if res.End.After(first) {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"creation ended %s after the first due instant: raise --due-in or --create-concurrency",
			res.End.Sub(first).Round(time.Millisecond)))
	}
	_, _ = fmt.Fprintf(stderr, "qhronos-bench: created %d in %.2fs (%.0f/s); waiting for deliveries\n",
		res.Created, rep.CreateSeconds, rep.CreateRate)

	stopProgress = progress(stderr, "received", &h.received, int64(res.Created*max(cfg.Subscribers, 1)))
	var probes *probeRun
	var probeClient *http.Client
	if probeIDs != nil {
		// The probe's own connections, so its reads never queue behind others.
		probeClient = newAPIClient(probeTimeout, maxProbesInFlight)
		p := &apiProbe{client: probeClient, server: server, token: cfg.Token, rate: cfg.ProbeRate, now: now}
		probes = p.start(ctx, probeIDs.list(), first)
	}
	rep.TimedOut = !waitDeliveries(ctx, rec, rs, last.Add(cfg.Timeout).Sub(now()), stderr)
	if probes != nil {
		rep.APIProbe = probes.stop()
		probeClient.CloseIdleConnections()
	}
	stopProgress()
	if !rep.TimedOut && cfg.Settle > 0 {
		// Late duplicates (a retry after a lost answer) are part of the figure.
		select {
		case <-time.After(cfg.Settle):
		case <-ctx.Done():
		}
	}
	tally := rec.Tally(cfg.CheckRecorded)
	rep.fillDeliveries(tally)
	if !tally.Last.IsZero() {
		// first due instant to last receipt: how long the whole plan took to drain
		rep.DrainSeconds = tally.Last.Sub(first).Seconds()
	}
	rep.Malformed = h.malformed.Load()
	rep.LoadAfter = loadAverage()
	if cfg.CheckRecorded > 0 && len(tally.DeliveryIDs) > 0 {
		rc := checkRecorded(ctx, client, server, cfg.Token, tally.DeliveryIDs)
		rep.Recorded = &rc
	}
	if memory != nil {
		rep.ServerMemory = memory.stop()
	}
	if ctx.Err() != nil {
		rep.Warnings = append(rep.Warnings, "interrupted")
	}
	return rep, nil
}

// newAPIClient returns a client for the server's API that keeps up to conns
// connections alive, so requests measure the server rather than handshakes.
func newAPIClient(timeout time.Duration, conns int) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: 90 * time.Second}}
}

// waitDeliveries blocks until every created event was received, the wait
// budget runs out, a receiver fails or ctx ends; it reports whether all
// arrived.
func waitDeliveries(ctx context.Context, rec *Recorder, rs *receivers, budget time.Duration, stderr io.Writer) bool {
	timer := time.NewTimer(max(budget, 0))
	defer timer.Stop()
	select {
	case <-rec.Done():
		return true
	case <-timer.C:
		return false
	case err := <-rs.errs:
		_, _ = fmt.Fprintln(stderr, "qhronos-bench:", err)
		return false
	case <-ctx.Done():
		return false
	}
}

// progress prints "label n/total" to w every 5 s until the returned stop is
// called.
func progress(w io.Writer, label string, n *atomic.Int64, total int64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_, _ = fmt.Fprintf(w, "qhronos-bench: %s %d/%d\n", label, n.Load(), total)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// newRunID names a run; it tags every event so a run's events can be found.
func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// loadAverage returns the 1, 5 and 15 minute load averages on Linux, or ""
// elsewhere; the figures are only meaningful next to the machine's load.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
