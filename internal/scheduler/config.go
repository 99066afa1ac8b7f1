package scheduler

import (
	"time"

	"github.com/qhronos/qhronos/internal/recurrence"
)

// Config holds the scheduler's tunables (config keys scheduler.*, retry.*);
// a zero field takes the documented default.
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

	RecordBatch    int           // outcomes per write (200)
	RecordInterval time.Duration // longest an outcome waits to be written (5 ms)

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

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	defInt := func(i *int, v int) {
		if *i <= 0 {
			*i = v
		}
	}
	if c.InstanceID == "" {
		c.InstanceID = "qhronos"
	}
	def(&c.Lookahead, 24*time.Hour)
	def(&c.ExpandInterval, time.Minute)
	defInt(&c.MaxRowsPerEventWindow, 1000)
	defInt(&c.ExpandBatch, 200)
	def(&c.MaxSleep, time.Second)
	defInt(&c.ClaimBatch, 500)
	defInt(&c.MaxPerDestination, 16)
	def(&c.ClaimAhead, 250*time.Millisecond)
	def(&c.Lease, DefaultLease)
	def(&c.LeaseRenewInterval, c.Lease/3)
	defInt(&c.Workers, 64)
	def(&c.AttemptTimeout, 30*time.Second)
	def(&c.MaxTimeout, 60*time.Second)
	def(&c.AckTimeout, 30*time.Second)
	def(&c.DrainTimeout, 30*time.Second)
	defInt(&c.RecordBatch, 200)
	def(&c.RecordInterval, 5*time.Millisecond)
	def(&c.RescueInterval, DefaultRescueInterval)
	defInt(&c.RescueBatch, 1000)
	c.Retry = c.Retry.withDefaults()
	c.CatchUp = c.CatchUp.withDefaults()
	return c
}
