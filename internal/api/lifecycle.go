package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/secrets"
)

// transition writes ev with its new status inside tx and lets the scheduler
// keep its future occurrences in step, in the same transaction: pausing
// cancels pending rows (history is untouched; manual triggers survive);
// resuming or rescheduling re-expands from now, so instants that fell inside
// a pause never fire while rows still in the series keep their ids.
func (s *Server) transition(c *gin.Context, tx *repository.Store, ev *model.Event, expectedVersion int64,
	target model.EventStatus, rescheduled bool, now time.Time) error {
	ctx := c.Request.Context()
	wasActive := ev.Status == model.EventActive
	ev.Status = target
	if err := tx.UpdateEvent(ctx, ev, expectedVersion); err != nil {
		return err
	}
	switch {
	case target != model.EventActive && wasActive:
		return s.Scheduler.Pause(ctx, tx, ev, now)
	case target == model.EventActive && !wasActive:
		return s.Scheduler.Resume(ctx, tx, ev, now)
	case target == model.EventActive && rescheduled:
		return s.Scheduler.Reschedule(ctx, tx, ev, now)
	}
	return nil
}

func (s *Server) pauseEvent(c *gin.Context) error {
	return s.setStatus(c, model.EventPaused)
}

func (s *Server) resumeEvent(c *gin.Context) error {
	return s.setStatus(c, model.EventActive)
}

func (s *Server) setStatus(c *gin.Context, target model.EventStatus) error {
	ev, err := s.modifiableEvent(c)
	if err != nil {
		return err
	}
	if err := checkIfMatch(c, &ev); err != nil {
		return err
	}
	now := s.Now()
	if ev.Status != target {
		version := ev.Version
		ev.UpdatedAt = now.UTC()
		err = s.Store.WithTx(c.Request.Context(), func(tx *repository.Store) error {
			return s.transition(c, tx, &ev, version, target, false, now)
		})
		if err != nil {
			return err
		}
		s.wake(c, &ev)
	}
	c.Header("ETag", etag(&ev))
	c.JSON(http.StatusOK, toEventJSON(&ev))
	return nil
}

// triggerEvent fires one occurrence now: marked manual, not counted toward
// COUNT, allowed while paused, honouring Idempotency-Key.
func (s *Server) triggerEvent(c *gin.Context) error {
	ev, err := s.modifiableEvent(c)
	if err != nil {
		return err
	}
	now := s.Now()
	var occ model.Occurrence
	return s.idempotent(c, nil, func(tx *repository.Store) (int, any, error) {
		ctx := c.Request.Context()
		at := model.RoundUp(now)
		// A scheduled instant may already hold this microsecond: step past it.
		for range 16 {
			n, err := tx.InsertOccurrences(ctx, ev.ID, []time.Time{at}, true, now)
			if err != nil {
				return 0, nil, err
			}
			if n == 1 {
				break
			}
			at = at.Add(time.Microsecond)
		}
		end := at.Add(time.Microsecond)
		rows, err := tx.ListOccurrences(ctx, model.OccurrenceFilter{EventID: ev.ID, From: &at, To: &end,
			Unrestricted: true, Limit: 1})
		if err != nil {
			return 0, nil, err
		}
		if len(rows) != 1 || !rows[0].Manual {
			return 0, nil, &input.Error{Status: http.StatusConflict, Message: "could not schedule a manual occurrence; retry"}
		}
		occ = rows[0]
		return http.StatusCreated, toOccurrenceJSON(&occ), nil
	}, func() { s.Scheduler.Wake(c.Request.Context(), occ.ScheduledAt) })
}

// rotateSecret issues a new signing secret, returned once; the secret in
// force until now — the event's own or the default — keeps signing beside it
// until the grace period ends.
func (s *Server) rotateSecret(c *gin.Context) error {
	ev, err := s.modifiableEvent(c)
	if err != nil {
		return err
	}
	grace := 24 * time.Hour
	if c.Request.ContentLength != 0 {
		members, _, err := readObject(c)
		if err != nil {
			return err
		}
		if err := input.RejectUnknown(members, input.Set("grace"), nil); err != nil {
			return err
		}
		var text string
		if sent, err := input.DecodeField(members, "grace", &text); err != nil {
			return err
		} else if sent {
			if grace, err = input.ParseDuration("grace", text, 0, 30*24*time.Hour); err != nil {
				return err
			}
		}
	}
	secret, err := secrets.GenerateSecret()
	if err != nil {
		return err
	}
	sealed, err := s.Secrets.Seal([]byte(secret))
	if err != nil {
		return err
	}
	now := s.Now().UTC()
	version := ev.Version
	// An event without a secret of its own signed with hmac.default_secret:
	// the rotation records that (an empty previous secret with an expiry,
	// see secrets.Sealed) and the default keeps signing through the grace.
	next := secrets.Sealed{Current: ev.HMACSecret}.Rotate(sealed, now, grace)
	ev.HMACSecret, ev.PreviousSecret, ev.PreviousSecretExpires = next.Current, next.Previous, next.PreviousUntil
	ev.UpdatedAt = now
	if err := s.Store.UpdateEvent(c.Request.Context(), &ev, version); err != nil {
		return err
	}
	c.Header("ETag", etag(&ev))
	c.JSON(http.StatusOK, gin.H{"event_id": ev.ID, "hmac_secret": secret,
		"previous_secret_expires_at": ev.PreviousSecretExpires})
	return nil
}
