package model

import "time"

// The actions of an event's history (HistoryEntry.Action).
const (
	HistoryCreate           = "create"
	HistoryUpdate           = "update"
	HistoryPause            = "pause"
	HistoryResume           = "resume"
	HistoryDelete           = "delete"
	HistoryTrigger          = "trigger"
	HistoryReplay           = "replay"
	HistoryRotateSecret     = "rotate_secret"
	HistorySkip             = "skip"
	HistoryUnskip           = "unskip"
	HistoryMove             = "move"
	HistoryExceptionAdded   = "exception_added"
	HistoryExceptionRemoved = "exception_removed"
	HistoryCalendarReplan   = "calendar_replan" // by the scheduler, after a calendar edit
	HistoryBackfill         = "backfill"
)

// HistoryFilter pages through one event's history, oldest first.
type HistoryFilter struct {
	// After is the keyset cursor: entries strictly after (At, ID).
	After *HistoryCursor
	Limit int
}

// HistoryCursor is a keyset position in an event's history.
type HistoryCursor struct {
	At time.Time
	ID string
}
