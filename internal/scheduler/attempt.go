package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/endpoints"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/tracing"
)

// goneReason is the event's last_status after a receiver answered 410.
const goneReason = "paused: the receiver answered 410 Gone"

// attempt runs one job's action and queues its outcome. It holds a pool
// slot until the action returns. An action naming an endpoint is admitted
// by the endpoint first: a disabled endpoint fails the row without an
// attempt, and a throttled or open one hands it back, due later, uncounted.
func (d *Dispatcher) attempt(jb *job) {
	if !d.usable(jb) {
		// The slot went to another instance, or this one could not renew
		// it in time: another instance may be firing the row. Let it go.
		<-d.sem
		d.log.Warn("bucket ownership lost before firing", zap.String("occurrence_id", jb.occ.ID))
		d.settled(jb.occ.ID)
		return
	}
	if jb.ev.Action.Type == model.ActionTopic {
		d.fanOut(jb)
		return
	}
	delivery, prepErr := d.deliveries.get(&jb.ev)
	var adm *endpoints.Admission
	if prepErr == nil {
		if id := actions.EndpointOf(delivery); id != "" {
			if adm = d.admit(jb, id); adm == nil {
				return
			}
		}
	}
	started := d.clock.Now()
	ctx, span := tracing.StartAttempt(d.attemptCtx, tracing.Attempt{EventID: jb.ev.ID, OccurrenceID: jb.occ.ID,
		Number: jb.occ.AttemptCount, ActionType: jb.ev.Action.Type, Propagate: !jb.ev.NoTracePropagation})
	out, ackTimeout := d.execute(ctx, jb, started, delivery, prepErr, adm)
	<-d.sem
	if errors.Is(out.Err, errLeaseGone) || errors.Is(out.Err, errHandedBack) {
		if adm != nil {
			d.endpoints.Done(d.attemptCtx, adm, false, false, "", 0)
		}
		if errors.Is(out.Err, errLeaseGone) {
			d.log.Warn("bucket ownership lost before sending", zap.String("occurrence_id", jb.occ.ID))
			d.settled(jb.occ.ID)
		}
		return
	}
	ended := d.clock.Now()
	if out.Duration <= 0 {
		out.Duration = ended.Sub(started)
	}
	if adm != nil {
		msg := ""
		if out.Err != nil {
			msg = out.Err.Error()
		}
		d.endpoints.Done(d.attemptCtx, adm, adm.Err == nil, out.OK(), msg, out.Duration)
	}
	v := jb.policy.Classify(out, jb.occ.ChargedAttempts(), ended, ackTimeout, d.rnd)
	if v.Status == model.OccurrenceCompleted && jb.ev.Callback() {
		// The receiver accepted the run; it completes it by callback, or
		// the run times out at the deadline.
		deadline := ended.Add(jb.ev.RunDeadline())
		v = Verdict{Status: model.OccurrenceRunning, AckDeadline: &deadline}
	}
	tracing.EndAttempt(span, string(v.Status), out.StatusCode, out.Err != nil)
	att := &model.Attempt{
		OccurrenceID: jb.occ.ID, EventID: jb.ev.ID, Attempt: jb.occ.AttemptCount, Manual: jb.occ.Manual || jb.occ.ManualRetry,
		StartedAt: started.UTC(), DurationMS: out.Duration.Milliseconds(), Outcome: string(v.Status),
		Truncated: out.Truncated, LatenessMS: started.Sub(lateFrom(&jb.occ)).Milliseconds(),
		ScheduledAt: jb.occ.ScheduledAt,
	}
	if adm != nil {
		att.EndpointID = &adm.EndpointID
	}
	if out.Request != nil {
		// Encoded here, on the attempt's goroutine, not in the recorder's
		// batch.
		s := out.Request.JSONString()
		att.RequestJSON = &s
	}
	rec := repository.OutcomeRecord{OccurrenceID: jb.occ.ID, Status: v.Status,
		NextAttemptAt: v.NextAttemptAt, AckDeadline: v.AckDeadline, Callback: jb.ev.Callback(), Now: ended, Attempt: att,
		EventID: jb.ev.ID, ActionType: jb.ev.Action.Type, Ran: true, LastStatus: lastStatus(v, out),
		Slot: jb.custody.slot, Epoch: jb.custody.epoch, Seen: jb.custody.seen,
		WholeSeries: jb.ev.OneTime() && !jb.occ.Manual, EventVersion: jb.ev.Version}
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
	// The write is fenced by the slot's epoch: if the slot went to another
	// instance meanwhile, it changes nothing (and that instance sends the
	// row again under the same id: a send already under way).
	d.record(rec, func(err error) {
		if err == nil {
			for _, o := range d.observers {
				o.ObserveAttempt(&jb.ev, &jb.occ, out, started)
			}
		}
		d.settled(jb.occ.ID)
		if err == nil {
			d.runEnded(&jb.ev, v.Status)
			d.concurrencyEnded(&jb.ev, jb.occ.ID, v.Status)
		}
	})
}

// admit asks the job's endpoint whether the attempt may go, without
// holding a pool slot while it waits. It returns nil when the row was
// settled instead (failed for a disabled endpoint, or handed back due
// later); the pool slot is then given back.
func (d *Dispatcher) admit(jb *job, id string) *endpoints.Admission {
	if d.endpoints == nil {
		return &endpoints.Admission{EndpointID: id, Err: fmt.Errorf("endpoint %s: endpoints are not served here", id)}
	}
	<-d.sem
	adm := d.endpoints.Admit(d.attemptCtx, id)
	now := d.clock.Now()
	switch {
	case adm.Disabled:
		d.ended(&jb.occ, jb.custody, model.ReasonEndpointDisabled, now)
		return nil
	case !adm.Defer.IsZero():
		d.deferRow(jb, adm.Defer, adm.Note, now)
		return nil
	}
	d.sem <- struct{}{}
	return adm
}

// deferRow makes a read row due again at until, its attempt uncounted. If
// the write fails the row is still due as it was: the next read retries it.
func (d *Dispatcher) deferRow(jb *job, until time.Time, note string, now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := jb.custody
	if _, err := d.store.DeferDue(ctx, jb.occ.ID, c.slot, c.epoch, c.seen, until, note, now); err != nil {
		d.log.Warn("defer a held occurrence", zap.String("occurrence_id", jb.occ.ID), zap.Error(err))
		until = now // still due as it was
	}
	d.settled(jb.occ.ID)
	d.Wake(until)
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
// delivery's own ack timeout, else the default. An endpoint's admission
// supplies the target, the secrets and the timeout.
func (d *Dispatcher) execute(parent context.Context, jb *job, started time.Time, delivery actions.Delivery, prepErr error,
	adm *endpoints.Admission) (actions.Outcome, time.Duration) {
	if prepErr != nil {
		// The stored params no longer prepare (an unknown type, a URL the
		// running outbound policy refuses): no later attempt can do better.
		return actions.Outcome{Err: fmt.Errorf("resolve action: %w", prepErr)}, d.cfg.AckTimeout
	}
	ackTimeout := delivery.AckTimeout()
	if ackTimeout <= 0 {
		ackTimeout = d.cfg.AckTimeout
	}
	timeout := d.timeout(&jb.ev)
	dest := delivery.Destination()
	var secrets []string
	var target *actions.Target
	if adm != nil {
		if adm.Err != nil {
			return actions.Outcome{Err: fmt.Errorf("resolve endpoint: %w", adm.Err), Retryable: adm.Retryable}, ackTimeout
		}
		secrets, target, dest = adm.Secrets, adm.Target, adm.Destination
		timeout = d.attemptTimeout(&jb.ev, adm)
	} else {
		var err error
		if secrets, err = d.secrets(&jb.ev); err != nil {
			// An operator can fix the key; the next attempt may succeed.
			return actions.Outcome{Err: fmt.Errorf("resolve signing secret: %w", err), Retryable: true}, ackTimeout
		}
	}
	req := actions.Request{
		EventID: jb.ev.ID, OccurrenceID: jb.occ.ID, Attempt: jb.occ.AttemptCount, Manual: jb.occ.Manual || jb.occ.ManualRetry,
		ScheduledAt: jb.occ.ScheduledAt, DispatchedAt: started.UTC(), Name: jb.ev.Name,
		Description: jb.ev.Description, Tags: jb.ev.Tags, Metadata: json.RawMessage(jb.ev.Metadata),
		Secrets: secrets, Timeout: timeout, Target: target, Run: d.run(&jb.ev, jb.occ.ID, started),
	}
	// Wait for the tenant's and the destination's share of the workers
	// without holding a pool slot (fairshare.go), at most one timeout.
	// The send gets its whole timeout after the wait: a request that left
	// with what the wait had not used timed out while its receiver was
	// still working on it, a duplicate charged to the retry budget.
	release, ok := d.share.tryAcquire(ScopeOf(&jb.ev), dest, timeout)
	if !ok {
		wait, cancelWait := context.WithTimeout(parent, timeout)
		var out actions.Outcome
		release, out, ok = d.takeShare(wait, jb, dest)
		cancelWait()
		if !ok {
			return out, ackTimeout
		}
	}
	defer release()
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	tracing.SetDestination(ctx, dest)
	// Checked again right before sending: the wait for a slot, or a stall
	// of the whole process (a SIGSTOP, a long GC pause), may have outlasted
	// the slot's lease, and another instance may be sending this row already.
	if !d.usable(jb) {
		return actions.Outcome{Err: errLeaseGone}, ackTimeout
	}
	d.logSend(jb)
	return delivery.Execute(ctx, req), ackTimeout
}

// errLeaseGone is execute's answer when the row's slot lapsed or was lost
// before anything was sent: the attempt is dropped, not recorded.
var errLeaseGone = errors.New("lease lost before sending")

// timeout is the event's own attempt timeout (capped) or the default.
func (d *Dispatcher) timeout(ev *model.Event) time.Duration {
	if ev.TimeoutMS <= 0 {
		return d.cfg.AttemptTimeout
	}
	return min(time.Duration(ev.TimeoutMS)*time.Millisecond, d.cfg.MaxTimeout)
}

// attemptTimeout is the timeout of an attempt admitted by an endpoint: the
// event's own, else the endpoint's (capped), else the default.
func (d *Dispatcher) attemptTimeout(ev *model.Event, adm *endpoints.Admission) time.Duration {
	if adm.Timeout > 0 && ev.TimeoutMS <= 0 {
		return min(adm.Timeout, d.cfg.MaxTimeout)
	}
	return d.timeout(ev)
}

// lastStatus summarizes an attempt for the event's last_status.
func lastStatus(v Verdict, out actions.Outcome) string {
	return model.RunStatus(string(v.Status), out.StatusCode, v.Error)
}
