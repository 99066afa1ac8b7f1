package scheduler

import (
	"time"

	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/planner"
	"github.com/qhronos/qhronos/internal/recurrence"
)

// Config holds the scheduler's tunables (config keys scheduler.*, retry.*,
// archival.*), every one explicit: ConfigFrom fills them from the
// configuration, whose defaults the comments below quote.
type Config struct {
	// InstanceID names this process as lease owner and leader candidate.
	InstanceID string

	Lookahead      time.Duration // expansion horizon beyond now (24 h)
	ExpandInterval time.Duration // expander period (1 min)
	// MaxRowsPerEventWindow caps the rows one event may add per expansion
	// run (1000), so a secondly rule cannot flood the table.
	MaxRowsPerEventWindow int
	ExpandBatch           int // events read per expander query (200)
	Recurrence            recurrence.Limits

	MaxSleep   time.Duration // the dispatcher's longest sleep (1 s)
	ClaimBatch int           // rows per claim (500)
	ClaimAhead time.Duration // claim this long before the instant (250 ms)
	// Lease is how long a claimed row stays this instance's without a
	// renewal (10 s): what a crash strands, for about this long plus the
	// rescue interval.
	Lease time.Duration
	// LeaseRenewInterval is the heartbeat period that renews the leases of
	// every row held (a third of the lease). The config package requires it
	// shorter than Lease; tests set it longer to renew by hand only.
	LeaseRenewInterval time.Duration
	Workers            int // concurrent attempts per instance (64)
	// Exclusive says no other process can use the database (the embedded
	// SQLite under its data-directory lock): every lease found at start
	// is a killed predecessor's and is rescued at once, not at expiry.
	Exclusive bool
	// APIOnly keeps the dispatcher off: this instance expands and rescues
	// but never fires (scheduler.dispatch = false).
	APIOnly bool
	// MaxPerDestination caps concurrent attempts to one host:port (16), so
	// one slow receiver cannot hold the whole pool.
	MaxPerDestination int
	AttemptTimeout    time.Duration // per attempt unless the event says otherwise (30 s)
	MaxTimeout        time.Duration // cap of an event's own timeout (60 s)
	AckTimeout        time.Duration // awaiting_ack deadline unless the action says otherwise (30 s)
	DrainTimeout      time.Duration // how long shutdown waits for in-flight attempts (30 s)

	// APIBaseURL is where the receivers of a callback event's deliveries
	// complete their runs (server.public_url); RunToken mints the run token
	// of an occurrence (auth.Keyring.RunToken), nil: a key of this process
	// only (tests).
	APIBaseURL string
	RunToken   func(occurrenceID string) string

	// ScopeShare and DestinationShare are the fractions of Workers one
	// tenant scope (0.5) and one destination (0.25, and at most
	// MaxPerDestination) may hold at once (fairshare.go).
	ScopeShare, DestinationShare float64

	RecordBatch    int           // outcomes per write (500)
	RecordInterval time.Duration // longest an outcome waits to be written (25 ms)
	// BookkeepingInterval is how often the event bookkeeping of recorded
	// outcomes (last_run_at, last_status, next_run_at, inactive) is written,
	// coalesced per event (DefaultBookkeepingInterval when zero).
	BookkeepingInterval time.Duration

	RescueInterval time.Duration // rescuer period (5 s)
	RescueBatch    int           // rows per rescue statement (1000)

	Retry   RetryDefaults
	CatchUp CatchUp
	Archive ArchiverConfig

	// LogDeliveries logs one line per attempt outcome at info (the embedded
	// default, or log.deliveries in production); otherwise at debug.
	LogDeliveries bool
}

// The lease defaults: a crashed process's rows are back in play at most
// DefaultLease after its last renewal plus DefaultRescueInterval, well
// within 30 s; a renewal may be two intervals late before a lease lapses.
const (
	DefaultLease          = 10 * time.Second
	DefaultRescueInterval = 5 * time.Second
)

// ConfigFrom takes the scheduler's settings from the loaded (validated)
// configuration, where their defaults live: the scheduler has none of its
// own. instanceID names this process.
func ConfigFrom(cfg *config.Config, instanceID string) Config {
	s := cfg.Scheduler
	return Config{
		InstanceID: instanceID,
		Lookahead:  s.Lookahead, ExpandInterval: s.ExpansionInterval, MaxRowsPerEventWindow: s.MaxRowsPerEventWindow,
		ExpandBatch: s.ExpandBatch,
		Recurrence:  recurrence.Limits{MinInterval: s.MinInterval, MaxCount: s.MaxCount},
		MaxSleep:    s.MaxSleep, ClaimBatch: s.ClaimBatch, ClaimAhead: s.ClaimAhead, Lease: s.Lease,
		LeaseRenewInterval: s.LeaseRenewInterval, Workers: s.Workers,
		// Without database.url the data directory is locked: no other
		// process holds leases in it.
		Exclusive: !cfg.Production(), APIOnly: !s.Dispatch,
		MaxPerDestination: cfg.Outbound.MaxPerHost, ScopeShare: s.ScopeShare, DestinationShare: s.DestinationShare,
		AttemptTimeout: cfg.Actions.AttemptTimeout, MaxTimeout: cfg.Actions.MaxAttemptTimeout,
		AckTimeout: cfg.WebSocket.AckTimeout, DrainTimeout: s.DrainTimeout,
		RecordBatch: s.RecordBatch, RecordInterval: s.RecordInterval,
		RescueInterval: s.RescuerInterval, RescueBatch: s.RescueBatch,
		Retry: RetryDefaults{MaxAttempts: cfg.Retry.MaxAttempts, InitialBackoff: cfg.Retry.InitialBackoff,
			MaxBackoff: cfg.Retry.MaxBackoff, RetryAfterCap: cfg.Retry.MaxRetryAfter},
		CatchUp: CatchUp{Window: s.CatchupWindow, Grace: s.CatchupGrace},
		Archive: ArchiverConfig{Enabled: cfg.Archival.Enabled, Retention: cfg.Archival.Retention,
			PurgeAfter: cfg.Archival.PurgeAfter, BatchSize: cfg.Archival.BatchSize,
			MaxBatches: cfg.Archival.MaxBatches, LockTTL: cfg.Archival.LockTTL, Interval: cfg.Archival.Interval},
		LogDeliveries: !cfg.Production() || cfg.Log.Deliveries,
		APIBaseURL:    cfg.APIBaseURL(),
	}
}

// Window is what one expansion of an event materializes.
func (c Config) Window() planner.Window {
	return planner.Window{CatchUp: c.CatchUp.Window, Lookahead: c.Lookahead, MaxRows: c.MaxRowsPerEventWindow}
}
