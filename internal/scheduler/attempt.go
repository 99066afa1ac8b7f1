package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// goneReason is the event's last_status after a receiver answered 410.
const goneReason = "paused: the receiver answered 410 Gone"

// attempt runs one job's action and queues its outcome. It holds a pool
// slot until the action returns.
func (d *Dispatcher) attempt(jb job) {
	started := d.clock.Now()
	if !d.leases.usable(jb.token, jb.occ.ID, started) {
		// The heartbeat found the row taken, or could not renew it in time:
		// another instance may be firing it. Hand it back if it is still
		// ours; the fenced release does nothing otherwise.
		<-d.sem
		d.log.Warn("lease lost before firing", zap.String("occurrence_id", jb.occ.ID))
		d.releaseIDs(jb.token, []string{jb.occ.ID})
		return
	}
	out, ackTimeout := d.execute(&jb, started)
	<-d.sem
	ended := d.clock.Now()
	if out.Duration <= 0 {
		out.Duration = ended.Sub(started)
	}
	v := jb.policy.Classify(out, jb.occ.AttemptCount, ended, ackTimeout, d.rnd)
	att := &model.Attempt{
		OccurrenceID: jb.occ.ID, EventID: jb.ev.ID, Attempt: jb.occ.AttemptCount, Manual: jb.occ.Manual || jb.occ.ManualRetry,
		StartedAt: started.UTC(), DurationMS: out.Duration.Milliseconds(), Outcome: string(v.Status),
		Truncated: out.Truncated, LatenessMS: started.Sub(lateFrom(&jb.occ)).Milliseconds(),
	}
	rec := repository.OutcomeRecord{OccurrenceID: jb.occ.ID, LeaseToken: jb.token, Status: v.Status,
		NextAttemptAt: v.NextAttemptAt, AckDeadline: v.AckDeadline, Now: ended, Attempt: att,
		EventID: jb.ev.ID, Ran: true, LastStatus: lastStatus(v, out)}
	if out.StatusCode != 0 {
		code := out.StatusCode
		att.StatusCode, rec.StatusCode = &code, &code
	}
	if out.Excerpt != "" {
		excerpt := out.Excerpt
		att.ResponseExcerpt, rec.ResponseBody = &excerpt, &excerpt
	}
	if v.Error != "" {
		msg := v.Error
		att.Error, rec.ErrorMessage = &msg, &msg
	}
	if v.PauseEvent {
		rec.PauseReason = goneReason
	}
	level := zap.DebugLevel
	if d.cfg.LogDeliveries {
		level = zap.InfoLevel
	}
	if ce := d.log.Check(level, "delivery attempt"); ce != nil {
		// Error texts never carry the URL (it may hold credentials).
		ce.Write(zap.String("event_id", jb.ev.ID), zap.String("occurrence_id", jb.occ.ID),
			zap.Int("attempt", jb.occ.AttemptCount), zap.String("action", jb.ev.Action.Type),
			zap.Time("scheduled_at", jb.occ.ScheduledAt), zap.Duration("lateness", started.Sub(jb.occ.ScheduledAt)),
			zap.String("outcome", string(v.Status)), zap.Int("status_code", out.StatusCode),
			zap.Duration("duration", out.Duration), zap.String("error", v.Error))
	}
	if d.leases.lost(jb.token, jb.occ.ID) {
		// Its new holder records the row; this attempt's outcome is not
		// written (the fenced write would be refused anyway).
		d.log.Warn("outcome dropped: lease lost", zap.String("occurrence_id", jb.occ.ID),
			zap.String("status", string(v.Status)))
		d.settled(jb.token, jb.occ.ID)
		return
	}
	d.leases.recording(jb.token, jb.occ.ID)
	occ := jb.occ
	ev := jb.ev
	d.rec.add(rec, func(err error) {
		if err == nil {
			for _, o := range d.observers {
				o.ObserveAttempt(&ev, &occ, out, started)
			}
		}
		d.settled(jb.token, jb.occ.ID)
	})
}

// lateFrom is the instant an attempt's lateness is measured from: the
// occurrence's own instant, or for an operator's re-delivery the moment it
// was asked for (the original instant may be days old, or ahead for a
// cancelled future row). Manual attempts are
// left out of lateness figures either way (see model.Stats).
func lateFrom(occ *model.Occurrence) time.Time {
	if occ.ManualRetry {
		return occ.NextAttemptAt
	}
	return occ.ScheduledAt
}

// execute runs the event version's prepared delivery within the attempt's
// timeout. It also returns how long an AwaitingAck outcome may wait: the
// delivery's own ack timeout, else the default.
func (d *Dispatcher) execute(jb *job, started time.Time) (actions.Outcome, time.Duration) {
	delivery, err := d.deliveries.get(&jb.ev)
	if err != nil {
		// The stored params no longer prepare (an unknown type, a URL the
		// running outbound policy refuses): no later attempt can do better.
		return actions.Outcome{Err: fmt.Errorf("resolve action: %w", err)}, d.cfg.AckTimeout
	}
	ackTimeout := delivery.AckTimeout()
	if ackTimeout <= 0 {
		ackTimeout = d.cfg.AckTimeout
	}
	secrets, err := d.secrets(&jb.ev)
	if err != nil {
		// An operator can fix the key; the next attempt may succeed.
		return actions.Outcome{Err: fmt.Errorf("resolve signing secret: %w", err), Retryable: true}, ackTimeout
	}
	timeout := d.timeout(&jb.ev)
	req := actions.Request{
		EventID: jb.ev.ID, OccurrenceID: jb.occ.ID, Attempt: jb.occ.AttemptCount, Manual: jb.occ.Manual || jb.occ.ManualRetry,
		ScheduledAt: jb.occ.ScheduledAt, DispatchedAt: started.UTC(), Name: jb.ev.Name,
		Description: jb.ev.Description, Tags: jb.ev.Tags, Metadata: json.RawMessage(jb.ev.Metadata),
		Secrets: secrets, Timeout: timeout,
	}
	ctx, cancel := context.WithTimeout(d.attemptCtx, timeout)
	defer cancel()
	if dest := delivery.Destination(); dest != "" {
		// Wait for the destination without holding a pool slot, so a slow
		// receiver cannot starve the others.
		<-d.sem
		release, err := d.perDest.Acquire(ctx, dest)
		d.sem <- struct{}{}
		if err != nil {
			return actions.Outcome{Err: fmt.Errorf("wait for a free slot to %s: %w", dest, err), Retryable: true}, ackTimeout
		}
		defer release()
	}
	return delivery.Execute(ctx, req), ackTimeout
}

// timeout is the event's own attempt timeout (capped) or the default.
func (d *Dispatcher) timeout(ev *model.Event) time.Duration {
	if ev.TimeoutMS <= 0 {
		return d.cfg.AttemptTimeout
	}
	return min(time.Duration(ev.TimeoutMS)*time.Millisecond, d.cfg.MaxTimeout)
}

// lastStatus summarizes an attempt for the event's last_status.
func lastStatus(v Verdict, out actions.Outcome) string {
	s := string(v.Status)
	if out.StatusCode != 0 {
		s += fmt.Sprintf(" (HTTP %d %s)", out.StatusCode, http.StatusText(out.StatusCode))
	}
	if v.Error != "" {
		msg := v.Error
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		s += ": " + msg
	}
	return s
}
