package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// maxEvents bounds one run, so a typo cannot queue millions of events.
const maxEvents = 1_000_000

// Config is the parsed command line.
type Config struct {
	Server            string
	Token             string
	Receivers         int
	ReceiverHost      string
	Events            int
	Mode              string
	DueIn             time.Duration
	BurstWindow       time.Duration
	Rate              float64
	Duration          time.Duration
	CreateConcurrency int
	Timeout           time.Duration
	Settle            time.Duration
	VerifySignature   string
	JSON              bool
	Tags              []string
	CheckRecorded     int
	Receipts          string
	ProbeRate         float64
	ServerPID         int
	// Subscribers, when > 0, makes every event target a topic with this
	// many subscriptions: each firing is expected that many times.
	Subscribers int
}

const usageText = `usage: qhronos-bench [flags]   (qhronos-bench version: print the version)

Creates one-time webhook events on a Qhronos server (ours or the original),
receives their deliveries on loopback receivers it runs itself, and reports
create rate, deliveries/s, lateness percentiles, duplicates and losses.
Only loopback addresses are accepted, for the server and the receivers.

While deliveries drain, --probe-rate times GET /events/{id} on this run's
events, and --server-pid samples the server's resident memory (Linux) from
the first create to the end; both appear in the report.

Exit status: 0 when every created event was delivered once with a valid
signature, 3 when the run finished with losses, duplicates, extra
occurrences, bad signatures or failed creates, 1 on errors, 2 on bad flags.

Flags:
`

// parseConfig parses args; the token falls back to $QHRONOS_TOKEN so it
// need not appear in the process list.
func parseConfig(args []string, stderr io.Writer) (Config, error) {
	var c Config
	var tags string
	fs := flag.NewFlagSet("qhronos-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.Server, "server", "http://127.0.0.1:8080", "base URL of the Qhronos API (loopback only)")
	fs.StringVar(&c.Token, "token", "", "bearer token (master or write JWT); default $QHRONOS_TOKEN")
	fs.IntVar(&c.Receivers, "receivers", 4, "webhook receivers to run, one loopback port each")
	fs.StringVar(&c.ReceiverHost, "receiver-host", "127.0.0.1", "loopback IP the receivers listen on")
	fs.IntVar(&c.Events, "events", 1000, "events to create in burst mode (steady: rate × duration)")
	fs.StringVar(&c.Mode, "mode", ModeBurst, "burst (all due within --burst-window) or steady (--rate for --duration)")
	fs.DurationVar(&c.DueIn, "due-in", 10*time.Second, "time from start to the first due instant; creation must fit in it")
	fs.DurationVar(&c.BurstWindow, "burst-window", time.Second, "burst: instants spread evenly over this (0 = all on one instant)")
	fs.Float64Var(&c.Rate, "rate", 100, "steady: due instants per second")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "steady: how long instants keep coming")
	fs.IntVar(&c.CreateConcurrency, "create-concurrency", 16, "concurrent POST /events requests")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "wait after the last due instant for missing deliveries")
	fs.DurationVar(&c.Settle, "settle", 2*time.Second, "keep listening this long after the last delivery, to catch duplicates")
	fs.StringVar(&c.VerifySignature, "verify-signature", "", "secret to verify X-Qhronos-Signature with (empty = not checked)")
	fs.BoolVar(&c.JSON, "json", false, "print the report as JSON instead of a table")
	fs.StringVar(&tags, "tags", "qhronos-bench", "comma-separated tags on every event (a run tag is added)")
	fs.IntVar(&c.CheckRecorded, "check-recorded", 50, "read back this many delivered occurrences to check they were recorded completed")
	fs.StringVar(&c.Receipts, "receipts", "", "write every receipt to this CSV file (delivery_id, event_id, attempt, scheduled_at, received_at)")
	fs.Float64Var(&c.ProbeRate, "probe-rate", 0, "GET /events/{id} per second while deliveries drain, timing the API (0 = off)")
	fs.IntVar(&c.Subscribers, "subscribers", 0, "fan-out: events target a topic of this run with this many subscriptions (their endpoints spread over the receivers); each firing is expected once per subscription (0 = plain webhooks)")
	fs.IntVar(&c.ServerPID, "server-pid", 0, "sample this server process's RSS every 250 ms from /proc (0 = off)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.Token == "" {
		c.Token = os.Getenv("QHRONOS_TOKEN")
	}
	for _, t := range strings.Split(tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			c.Tags = append(c.Tags, t)
		}
	}
	eventsSet := false
	fs.Visit(func(f *flag.Flag) { eventsSet = eventsSet || f.Name == "events" })
	if c.Mode == ModeSteady {
		n := int(c.Rate * c.Duration.Seconds())
		if eventsSet && c.Events != n {
			return c, fmt.Errorf("--events: steady mode creates --rate × --duration = %d events; drop --events or make them agree", n)
		}
		c.Events = n
	}
	return c, c.validate()
}

func (c Config) validate() error {
	switch {
	case c.Token == "":
		return fmt.Errorf("--token: required (or set QHRONOS_TOKEN)")
	case c.Receivers < 1 || c.Receivers > 256:
		return fmt.Errorf("--receivers: must be between 1 and 256")
	case c.Events < 1 || c.Events > maxEvents:
		return fmt.Errorf("--events: must be between 1 and %d, got %d", maxEvents, c.Events)
	case c.CreateConcurrency < 1 || c.CreateConcurrency > 1024:
		return fmt.Errorf("--create-concurrency: must be between 1 and 1024")
	case c.DueIn <= 0:
		return fmt.Errorf("--due-in: must be positive")
	case c.Timeout <= 0:
		return fmt.Errorf("--timeout: must be positive")
	case c.Settle < 0:
		return fmt.Errorf("--settle: must not be negative")
	case c.CheckRecorded < 0:
		return fmt.Errorf("--check-recorded: must not be negative")
	case !(c.ProbeRate >= 0 && c.ProbeRate <= maxProbeRate): // also refuses NaN
		return fmt.Errorf("--probe-rate: must be between 0 (off) and %d per second, got %v", maxProbeRate, c.ProbeRate)
	case c.Subscribers < 0 || c.Subscribers > 10_000:
		return fmt.Errorf("--subscribers: must be between 0 (plain webhooks) and 10000, got %d", c.Subscribers)
	case c.Subscribers > 0 && c.Events*c.Subscribers > maxEvents:
		return fmt.Errorf("--subscribers: --events × --subscribers must be at most %d deliveries", maxEvents)
	case c.ServerPID < 0:
		return fmt.Errorf("--server-pid: must not be negative, got %d", c.ServerPID)
	}
	return nil
}
