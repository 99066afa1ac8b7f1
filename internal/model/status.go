package model

// EventStatus is the life-cycle state of an event.
type EventStatus string

const (
	EventActive   EventStatus = "active"
	EventPaused   EventStatus = "paused"
	EventInactive EventStatus = "inactive" // the series ended, or a one-time event fired
	EventDeleted  EventStatus = "deleted"  // soft-deleted; reads answer 404
)

// OccurrenceStatus is the life-cycle state of one occurrence.
type OccurrenceStatus string

const (
	OccurrencePending     OccurrenceStatus = "pending"
	OccurrenceDispatching OccurrenceStatus = "dispatching" // leased by a worker
	OccurrenceRetrying    OccurrenceStatus = "retrying"
	OccurrenceAwaitingAck OccurrenceStatus = "awaiting_ack"
	OccurrenceCompleted   OccurrenceStatus = "completed"
	OccurrenceFailed      OccurrenceStatus = "failed"
	OccurrenceMissed      OccurrenceStatus = "missed"
	OccurrenceCancelled   OccurrenceStatus = "cancelled"
	OccurrenceSkipped     OccurrenceStatus = "skipped" // not fired on purpose; Reason says why
	// OccurrenceRunning: a callback event's receiver accepted the delivery
	// and runs the job; it ends when the receiver completes it, or
	// OccurrenceTimedOut (a failure) when neither a completion nor a
	// heartbeat came within the event's max_runtime.
	OccurrenceRunning  OccurrenceStatus = "running"
	OccurrenceTimedOut OccurrenceStatus = "timed_out"
)

// The reasons a planned instant did not fire (Occurrence.Reason), by the
// terminal state they go with. They are machine-readable and stable.
const (
	// skipped
	ReasonManual   = "manual"   // an operator skipped the instant
	ReasonCalendar = "calendar" // an exclusion calendar blocks its day
	ReasonPaused   = "paused"   // the event was paused at its instant
	ReasonDSTGap   = "dst_gap"  // its local time does not exist (spring forward) and dst.gap is skip
	// missed
	ReasonCatchUpWindow = "catch_up_window" // found older than the catch-up window
	ReasonCatchUpPolicy = "catch_up_policy" // the event's catch_up said not to fire it late
	// cancelled
	ReasonEventDeleted = "event_deleted"
	ReasonRuleChanged  = "rule_changed" // an edit of the schedule removed or re-planned the instant
	// failed without an attempt
	ReasonEndpointDisabled = "endpoint_disabled" // the endpoint it delivers to is disabled
	// skipped or cancelled: the event's overlap policy (a run of it was
	// still in progress at the instant)
	ReasonOverlap = "overlap"
	// any state: where the row came from
	ReasonBackfill = "backfill" // created by a backfill of a past range; a later skip or miss replaces it
	// pending: it may fire, but its concurrency key is at its limit (or
	// paused); cleared when it takes a slot
	ReasonConcurrencyWait = "concurrency_wait"
)

// What a run's receiver reports when it completes it.
const (
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
)

// The error messages of runs that ended badly.
const (
	RunFailedMessage   = "the run reported failure"
	RunTimedOutMessage = "the run timed out: no completion or heartbeat within its max_runtime"
)

// RunEnd is the occurrence state a run's reported status ends it in.
func RunEnd(reported string) OccurrenceStatus {
	if reported == RunSucceeded {
		return OccurrenceCompleted
	}
	return OccurrenceFailed
}

// EndedBy is the terminal state and description of a row that will not
// fire because its event was paused (skipped), deleted or edited
// (cancelled), or its endpoint is disabled (failed).
func EndedBy(reason string) (OccurrenceStatus, string) {
	switch reason {
	case ReasonPaused:
		return OccurrenceSkipped, "skipped: the event was paused"
	case ReasonEventDeleted:
		return OccurrenceCancelled, "cancelled: the event was deleted"
	case ReasonEndpointDisabled:
		return OccurrenceFailed, "failed: its endpoint is disabled"
	default:
		return OccurrenceCancelled, "cancelled: the event was edited and the instant is no longer in its schedule"
	}
}

// Reasons lists every reason by the state it goes with (filters and
// validation use it).
var Reasons = map[OccurrenceStatus][]string{
	OccurrenceSkipped:   {ReasonManual, ReasonCalendar, ReasonPaused, ReasonDSTGap, ReasonOverlap},
	OccurrenceMissed:    {ReasonCatchUpWindow, ReasonCatchUpPolicy},
	OccurrenceCancelled: {ReasonEventDeleted, ReasonRuleChanged, ReasonOverlap},
	OccurrenceFailed:    {ReasonEndpointDisabled},
}

// The named sets of occurrence states; SQL and code both use these instead of
// repeating the lists.
var (
	// Waiting rows are due work nobody holds: a dispatcher may claim them.
	Waiting = []OccurrenceStatus{OccurrencePending, OccurrenceRetrying}
	// Held rows are leased by a dispatcher, or were delivered and wait for
	// a client's ack or a run's completion, each until a deadline.
	Held = []OccurrenceStatus{OccurrenceDispatching, OccurrenceAwaitingAck, OccurrenceRunning}
	// InProgress rows are runs under way: being delivered, delivered and
	// waiting for an ack or a run's completion, or failed and waiting for
	// their retry. An event's overlap policy looks at them.
	InProgress = []OccurrenceStatus{OccurrenceDispatching, OccurrenceAwaitingAck, OccurrenceRunning,
		OccurrenceRetrying}
	// Unfinished rows may still fire or end: waiting or held.
	Unfinished = []OccurrenceStatus{OccurrencePending, OccurrenceRetrying, OccurrenceDispatching, OccurrenceAwaitingAck,
		OccurrenceRunning}
	// Finished rows never fire again unless an operator replays them.
	Finished = []OccurrenceStatus{OccurrenceCompleted, OccurrenceFailed, OccurrenceMissed, OccurrenceCancelled,
		OccurrenceSkipped, OccurrenceTimedOut}
)

// Terminal reports whether no further attempt will be made.
func (s OccurrenceStatus) Terminal() bool { return s.In(Finished) }

// In reports whether s belongs to set.
func (s OccurrenceStatus) In(set []OccurrenceStatus) bool {
	for _, v := range set {
		if v == s {
			return true
		}
	}
	return false
}

// Access is a token's access level: read < write < admin.
type Access string

const (
	AccessRead  Access = "read"
	AccessWrite Access = "write"
	AccessAdmin Access = "admin"
	// AccessPortal is the token of a redeemed portal link: outside the
	// order above, it allows nothing by itself; the API opens the portal's
	// routes to it (endpoints, subscriptions, topics, deliveries), within
	// its tags. No request can mint it: only redeeming a link does.
	AccessPortal Access = "portal"
)
