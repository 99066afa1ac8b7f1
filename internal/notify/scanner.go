package notify

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/startstop"
)

// ScanStore is what the scanner reads and where it keeps its cursors.
type ScanStore interface {
	NotificationCursor(ctx context.Context, name string) (model.ScanCursor, bool, error)
	SetNotificationCursor(ctx context.Context, name string, c model.ScanCursor, now time.Time) error
	FailedOccurrencesAfter(ctx context.Context, after model.ScanCursor, upto time.Time, limit int) ([]model.FailedOccurrence, error)
	EndedEventsAfter(ctx context.Context, after model.ScanCursor, upto time.Time, limit int) ([]model.EndedEvent, error)
	MissedStore
}

// Scanner cursors and lock names.
const (
	scannerLock   = "notify-scanner"
	failedCursor  = "delivery_failed"
	endedCursor   = "series_ended"
	missedCursor  = "missed"
	overdueCursor = "missed_overdue"
	scanBatch     = 500
	defaultSettle = 5 * time.Second
)

// ScannerConfig tunes the scanner.
type ScannerConfig struct {
	Interval time.Duration // default 10s
	// Settle keeps the scan this far behind now, so a transaction that
	// wrote an earlier updated_at but committed late is still read.
	Settle time.Duration // default 5s
	Owner  string        // this instance, for the leader lock
	// MissedAfter is how long past its instant a pending occurrence counts
	// as not fired (the `missed` notice); default 5m.
	MissedAfter time.Duration
}

// Scanner reports occurrences that failed after their last retry, events
// whose series ended and instants that did not fire. Only the leader scans; its cursors are stored,
// so a restart or a new leader neither repeats nor skips a notice (beyond
// the one scan in flight when an instance dies).
type Scanner struct {
	startstop.Base
	store    ScanStore
	notifier *Notifier
	locker   coordination.Locker
	now      func() time.Time
	cfg      ScannerConfig
	log      *zap.Logger
}

// NewScanner builds the scanner; locker nil scans on every call (one
// instance).
func NewScanner(store ScanStore, n *Notifier, locker coordination.Locker, now func() time.Time, cfg ScannerConfig, log *zap.Logger) *Scanner {
	if cfg.Interval <= 0 {
		cfg.Interval = 10 * time.Second
	}
	if cfg.Settle <= 0 {
		cfg.Settle = defaultSettle
	}
	if cfg.MissedAfter <= 0 {
		cfg.MissedAfter = 5 * time.Minute
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Scanner{store: store, notifier: n, locker: locker, now: now, cfg: cfg, log: log.Named("notify-scanner")}
}

// Start scans every interval until ctx ends or Stop.
func (s *Scanner) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := s.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	go func() {
		defer stopped()
		startstop.Every(ctx, s.cfg.Interval, true, func(ctx context.Context) {
			if _, err := s.RunOnce(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("scan for notices", zap.Error(err))
			}
		})
	}()
	return nil
}

// RunOnce reports what changed since the last scan and returns how many
// notices it queued.
func (s *Scanner) RunOnce(ctx context.Context) (int, error) {
	if s.locker != nil {
		ok, err := s.locker.TryLock(ctx, scannerLock, s.cfg.Owner, 3*s.cfg.Interval)
		if err != nil {
			return 0, fmt.Errorf("take scanner lock: %w", err)
		}
		if !ok {
			return 0, nil
		}
	}
	now := s.now().UTC()
	upto := now.Add(-s.cfg.Settle)
	failed, err := s.scanFailed(ctx, upto, now)
	if err != nil {
		return failed, err
	}
	ended, err := s.scanEnded(ctx, upto, now)
	if err != nil {
		return failed + ended, err
	}
	missed, err := s.scanMissed(ctx, upto, now)
	return failed + ended + missed, err
}

// cursor returns where the named scan resumes; the first scan of a
// deployment starts now instead of reporting its whole history.
func (s *Scanner) cursor(ctx context.Context, name string, upto, now time.Time) (model.ScanCursor, bool, error) {
	c, ok, err := s.store.NotificationCursor(ctx, name)
	if err != nil || ok {
		return c, ok, err
	}
	c = model.ScanCursor{At: upto}
	return c, false, s.store.SetNotificationCursor(ctx, name, c, now)
}

func (s *Scanner) scanFailed(ctx context.Context, upto, now time.Time) (int, error) {
	return scan(ctx, s, failedCursor, []Kind{DeliveryFailed, RunFailed, RunTimedOut}, upto, now,
		s.store.FailedOccurrencesAfter,
		func(o model.FailedOccurrence) model.ScanCursor {
			return model.ScanCursor{At: o.UpdatedAt, LastID: o.ID}
		},
		notifyEach(s, failedNotice))
}

func (s *Scanner) scanEnded(ctx context.Context, upto, now time.Time) (int, error) {
	return scan(ctx, s, endedCursor, []Kind{SeriesEnded}, upto, now, s.store.EndedEventsAfter,
		func(e model.EndedEvent) model.ScanCursor { return model.ScanCursor{At: e.UpdatedAt, LastID: e.ID} },
		notifyEach(s, endedNotice))
}

// notifyEach reports every row as one notice.
func notifyEach[T any](s *Scanner, notice func(T) Notice) func(context.Context, []T) (int, error) {
	return func(ctx context.Context, rows []T) (int, error) {
		for _, r := range rows {
			s.notifier.Notify(ctx, notice(r))
		}
		return len(rows), nil
	}
}

// afterEveryID sorts after every id, in both stores: a cursor at (upto,
// afterEveryID) has read everything up to upto.
const afterEveryID = "ffffffff-ffff-ffff-ffff-ffffffffffff"

// scan reports what one source holds after its cursor and up to upto, a
// batch at a time, and leaves the cursor at upto once the range is read:
// rows with nothing to report (a million completed deliveries) are read
// once, not again at every scan until a failure moves the cursor. A source
// none of whose kinds a channel wants is not read at all; its cursor just
// moves on, so a channel added later does not get the backlog.
func scan[T any](ctx context.Context, s *Scanner, name string, kinds []Kind, upto, now time.Time,
	read func(context.Context, model.ScanCursor, time.Time, int) ([]T, error),
	key func(T) model.ScanCursor, report func(context.Context, []T) (int, error)) (int, error) {
	c, ok, err := s.cursor(ctx, name, upto, now)
	if err != nil || !ok {
		return 0, err
	}
	done := model.ScanCursor{At: upto, LastID: afterEveryID}
	if !slices.ContainsFunc(kinds, s.notifier.Wants) {
		return 0, s.store.SetNotificationCursor(ctx, name, done, now)
	}
	total := 0
	for {
		rows, err := read(ctx, c, upto, scanBatch)
		if err != nil {
			return total, err
		}
		n, err := report(ctx, rows)
		total += n
		if err != nil {
			return total, err
		}
		if len(rows) < scanBatch {
			return total, s.store.SetNotificationCursor(ctx, name, done, now)
		}
		c = key(rows[len(rows)-1])
		if err := s.store.SetNotificationCursor(ctx, name, c, now); err != nil {
			return total, err
		}
	}
}

func failedNotice(o model.FailedOccurrence) Notice {
	errText := ""
	switch {
	case o.Error != nil && *o.Error != "":
		errText = *o.Error
	case o.StatusCode != nil:
		errText = "HTTP " + strconv.Itoa(*o.StatusCode)
	}
	fields := map[string]string{"event_name": o.EventName, "error": errText,
		"scheduled_at": o.ScheduledAt.Format(time.RFC3339), "attempts": strconv.Itoa(o.AttemptCount)}
	n := Notice{Kind: DeliveryFailed, At: o.UpdatedAt, EventID: o.EventID, OccurrenceID: o.ID, Fields: fields,
		Tags:  o.Tags,
		Title: fmt.Sprintf("Event %s: delivery failed after %d attempts", o.EventName, o.AttemptCount),
		Text: fmt.Sprintf("The occurrence %s of event %s (%s), scheduled at %s, failed after its last retry: %s",
			o.ID, o.EventName, o.EventID, fields["scheduled_at"], orNone(errText))}
	switch {
	case o.Status == string(model.OccurrenceTimedOut):
		n.Kind, n.Title = RunTimedOut, fmt.Sprintf("Event %s: run timed out", o.EventName)
		n.Text = fmt.Sprintf("The run of occurrence %s of event %s (%s), scheduled at %s, neither completed nor "+
			"sent a heartbeat within its max_runtime. It is not sent again; replay it to start a new run.",
			o.ID, o.EventName, o.EventID, fields["scheduled_at"])
	case o.RunStatus != nil && *o.RunStatus == model.RunFailed:
		n.Kind, n.Title = RunFailed, fmt.Sprintf("Event %s: run failed", o.EventName)
		n.Text = fmt.Sprintf("The receiver reported the run of occurrence %s of event %s (%s), scheduled at %s, "+
			"failed. It is not sent again; replay it to start a new run.", o.ID, o.EventName, o.EventID,
			fields["scheduled_at"])
	}
	if o.EndpointID != nil {
		n.EndpointID = *o.EndpointID
	}
	return n
}

func endedNotice(e model.EndedEvent) Notice {
	n := Notice{Kind: SeriesEnded, At: e.UpdatedAt, EventID: e.ID, Tags: e.Tags,
		Fields: map[string]string{"event_name": e.Name},
		Title:  fmt.Sprintf("Event %s: series ended", e.Name),
		Text:   fmt.Sprintf("The event %s (%s) has no more occurrences to fire; it is now inactive.", e.Name, e.ID)}
	if e.LastRunAt != nil {
		n.Fields["last_run_at"] = e.LastRunAt.Format(time.RFC3339)
	}
	if e.EndpointID != nil {
		n.EndpointID = *e.EndpointID
	}
	return n
}
