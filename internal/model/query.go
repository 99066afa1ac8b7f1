package model

import (
	"fmt"
	"time"
)

// EventFilter selects events for listing.
type EventFilter struct {
	AnyTags []string // at least one of these tags
	AllTags []string // every one of these tags
	// Scope restricts to events sharing a tag with it unless Unrestricted.
	Scope        []string
	Unrestricted bool
	Status       []EventStatus
	CreatedFrom  *time.Time // inclusive
	CreatedTo    *time.Time // exclusive
	// NameContains keeps events whose name contains it, case-insensitively
	// (case folding of ASCII letters, which both backends share).
	NameContains string
	// EndpointID keeps events whose action names this endpoint.
	EndpointID string
	// Topic keeps events that target this topic (its exact name).
	Topic string
	// CalendarID keeps events that honour this calendar.
	CalendarID string
	// Key keeps the event with this key (in any key scope the principal
	// can read).
	Key string
	// After is the keyset cursor: rows strictly older than (CreatedAt, ID).
	After *EventCursor
	Limit int
}

// EventCursor is a keyset position in the newest-first listing.
type EventCursor struct {
	CreatedAt time.Time
	ID        string
}

// OccurrenceOrder is the order of an occurrence listing.
type OccurrenceOrder int

const (
	// NewestFirst orders by scheduled_at descending (the zero value).
	NewestFirst OccurrenceOrder = iota
	// OldestFirst orders by scheduled_at ascending.
	OldestFirst
	// HistoryFirst lists history (scheduled at or before the filter's
	// Boundary) newest first, then upcoming rows nearest first.
	HistoryFirst
)

// OccurrenceFilter selects occurrences for listing; tag and scope filters
// apply to the owning event's tags.
type OccurrenceFilter struct {
	EventID    string
	Status     []OccurrenceStatus
	Reasons    []string   // any of these reasons (skipped, missed, cancelled rows)
	From, To   *time.Time // scheduled_at in [From, To)
	StatusCode *int       // the last attempt's HTTP status code
	// EndpointID keeps occurrences of events whose action names this
	// endpoint; EventQuery those of events whose name contains it (ASCII
	// case folded) or whose key is it.
	EndpointID   string
	EventQuery   string
	AnyTags      []string
	AllTags      []string
	Scope        []string
	Unrestricted bool
	Order        OccurrenceOrder
	Boundary     time.Time         // HistoryFirst: history is scheduled at or before it
	After        *OccurrenceCursor // keyset position in Order
	Offset       int               // page-based listing of the original API
	Limit        int
	// CountBound, when positive, makes a count stop past that many rows:
	// the page-based form's total is bounded so that no page counts the
	// whole history.
	CountBound int
}

// OccurrenceCursor is a keyset position in a listing.
type OccurrenceCursor struct {
	ScheduledAt time.Time
	ID          string
	Upcoming    bool // HistoryFirst: the position is past the boundary
}

// ErrNotRetryable is returned (wrapping ErrConflict) when an occurrence asked
// to be re-delivered is not in a terminal state: it is pending, leased,
// retrying or awaiting an acknowledgement, so it will fire anyway.
var ErrNotRetryable = fmt.Errorf("%w: occurrence is not in a terminal state", ErrConflict)

// RetryFilter selects terminal occurrences to re-queue in bulk. Scope is a
// MODIFY scope: unless Unrestricted, an occurrence qualifies only when its
// event has tags and all of them are inside Scope (what a write token may
// change). Occurrences of deleted events never qualify.
type RetryFilter struct {
	EventID      string
	AnyTags      []string
	Status       []OccurrenceStatus // terminal statuses only
	From, To     *time.Time         // scheduled_at in [From, To)
	StatusCode   *int               // the last attempt's HTTP status code
	Scope        []string
	Unrestricted bool
	Limit        int // total to re-queue
	BatchSize    int // rows per transaction
}

// RetryResult reports a bulk re-queue.
type RetryResult struct {
	Requeued     int  `json:"requeued"`
	LimitReached bool `json:"limit_reached"`
}

// StatsFilter selects what GET /stats summarizes: occurrences scheduled and
// attempts started in [Since, Until), of events the scope can read; Now
// decides what is currently due.
type StatsFilter struct {
	Since, Until time.Time
	Now          time.Time
	Scope        []string
	Unrestricted bool
	// TotalOnly skips the per-action breakdown, which lets every query read
	// occurrences and attempts without joining events.
	TotalOnly bool
	// Raw reads the history's rows even when unrestricted, instead of the
	// rollups: the reference the rollups are checked against.
	Raw bool
}

// Percentiles are nearest-rank percentiles of a set of millisecond values:
// the value at rank ceil(p/100 × Count) of the sorted set (0 when empty).
type Percentiles struct {
	Count int   `json:"count"`
	P50   int64 `json:"p50"`
	P95   int64 `json:"p95"`
	P99   int64 `json:"p99"`
}

// GroupStats summarizes one action type, or everything.
type GroupStats struct {
	Occurrences int                      `json:"occurrences"`
	ByStatus    map[OccurrenceStatus]int `json:"by_status"`
	// ByReason counts skipped, missed and cancelled occurrences by reason.
	ByReason   map[OccurrenceStatus]map[string]int `json:"by_reason"`
	Attempts   int                                 `json:"attempts"`
	DurationMS Percentiles                         `json:"duration_ms"`
	LatenessMS Percentiles                         `json:"lateness_ms"`
	Due        int                                 `json:"due"`
	Retrying   int                                 `json:"retrying"`
}

// CountReason adds n occurrences that ended in status for reason.
func (g *GroupStats) CountReason(status OccurrenceStatus, reason string, n int) {
	if g.ByReason[status] == nil {
		g.ByReason[status] = map[string]int{}
	}
	g.ByReason[status][reason] += n
}

// Stats is the answer of GET /stats. Due and Retrying are the queue now,
// whatever the window; everything else is inside the window. Only live
// tables are read: the window (24 h by default) is far inside retention.
type Stats struct {
	Since    time.Time              `json:"since"`
	Until    time.Time              `json:"until"`
	Total    GroupStats             `json:"total"`
	ByAction map[string]*GroupStats `json:"by_action"`
}

// TimelineFilter selects the attempts GET /stats/timeline buckets: started
// in [Since, Since + Step × Buckets), of events the scope can read.
type TimelineFilter struct {
	Since        time.Time
	Step         time.Duration
	Buckets      int
	Scope        []string
	Unrestricted bool
	// Raw reads the attempts' rows instead of the rollups (see StatsFilter).
	Raw bool
}

// TimelineBucket summarizes the attempts that started in one step.
// Lateness covers first, scheduled attempts only (as in Stats).
type TimelineBucket struct {
	Start      time.Time   `json:"start"`
	Attempts   int         `json:"attempts"`
	Completed  int         `json:"completed"`
	Failed     int         `json:"failed"`
	LatenessMS Percentiles `json:"lateness_ms"`
}

// MaxTimelineBuckets bounds the CASE expression and the answer.
const MaxTimelineBuckets = 1440
