package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/endpoints"
	"github.com/qhronos/qhronos/internal/fanout"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/tracing"
)

// maxFanoutRounds bounds the rounds of one fan-out occurrence that a
// retry budget does not: deliveries an endpoint keeps deferring, or rounds
// lost to crashes before their outcome was written.
const maxFanoutRounds = 1000

// fanoutParallelism is how many deliveries of one round are in flight at
// once: a round to many subscribers is bounded by the slowest receivers'
// latency, not by their number. All rounds together send at most
// scheduler.workers at once (Dispatcher.fanoutSends), and each delivery
// first takes its subscriber's and its destination's share of the workers,
// as any attempt does (deliveryShare).
const fanoutParallelism = 32

// fanoutDelivery is one subscription's delivery in a round.
type fanoutDelivery struct {
	sub     model.Subscription
	attempt int // 1-based number within the subscription's retry budget
	manual  bool
	// results
	status  model.OccurrenceStatus // completed, retrying, failed; "" when deferred
	nextAt  time.Time              // retrying or deferred
	errText string
	gone    bool
	record  *model.Attempt
	out     actions.Outcome
	started time.Time
}

// fanOut runs one round of an occurrence of an event that targets a topic
// (model.Fanout): at the first round it resolves the matching subscriptions
// and their filters; every round sends the deliveries that are due, each to
// its subscription's endpoint under the endpoint's secret, limits and
// circuit, and records the outcome, the attempts and the fan-out document
// in one write, fenced by the slot's epoch like any outcome. The round holds
// the pool slot it was started with.
func (d *Dispatcher) fanOut(jb *job) {
	now := d.clock.Now()
	ctx := d.attemptCtx
	state, due, err := d.fanoutRound(ctx, jb, now)
	if err != nil {
		// Nothing was sent and nothing written: the row is still due.
		<-d.sem
		d.log.Warn("resolve a fan-out", zap.String("occurrence_id", jb.occ.ID), zap.Error(err))
		d.settled(jb.occ.ID)
		d.Wake(now.Add(time.Second))
		return
	}
	if err := d.sendAll(ctx, jb, due); err != nil {
		<-d.sem
		d.log.Warn("bucket ownership lost during a fan-out", zap.String("occurrence_id", jb.occ.ID))
		d.settled(jb.occ.ID)
		return
	}
	<-d.sem
	ended := d.clock.Now()
	var records []*model.Attempt
	for _, dl := range due {
		if dl.record != nil {
			records = append(records, dl.record)
		}
		state.Settle(dl.sub.ID, dl.status, dl.attempt, dl.manual, dl.nextAt, dl.errText)
		if dl.gone {
			d.pauseGoneSubscription(dl.sub.ID, ended)
		}
	}
	rec := repository.OutcomeRecord{OccurrenceID: jb.occ.ID, Now: ended, Deliveries: records, Fanout: state.Encode(),
		EventID: jb.ev.ID, ActionType: jb.ev.Action.Type, Ran: len(records) > 0, Uncount: len(records) == 0,
		Slot: jb.custody.slot, Epoch: jb.custody.epoch, Seen: jb.custody.seen,
		WholeSeries: jb.ev.OneTime() && !jb.occ.Manual, EventVersion: jb.ev.Version}
	rec.Status, rec.NextAttemptAt, rec.ErrorMessage = state.Outcome()
	rec.LastStatus = string(rec.Status)
	if rec.ErrorMessage != nil {
		rec.LastStatus = model.RunStatus(string(rec.Status), 0, *rec.ErrorMessage)
	}
	d.record(rec, func(err error) {
		if err == nil {
			// Every delivery is an attempt for the metrics; the round's
			// first stands for the occurrence's own first attempt (its
			// lateness, the listeners' one frame per occurrence).
			first := true
			for _, dl := range due {
				if dl.record == nil {
					continue
				}
				occ := jb.occ
				if !first {
					occ.AttemptCount = 0
				}
				first = false
				for _, o := range d.observers {
					o.ObserveAttempt(&jb.ev, &occ, dl.out, dl.started)
				}
			}
		}
		d.settled(jb.occ.ID)
		if err == nil {
			d.runEnded(&jb.ev, rec.Status)
			d.concurrencyEnded(&jb.ev, jb.occ.ID, rec.Status)
		}
	})
}

// fanoutRound reads what the round delivers: at the first round the
// subscriptions that match (their filters decided here; the set is fixed
// from then on), afterwards the pending deliveries that are due. On an
// operator's replay with nothing pending, every failed delivery is due
// again.
func (d *Dispatcher) fanoutRound(ctx context.Context, jb *job, now time.Time) (*model.Fanout, []*fanoutDelivery, error) {
	state, err := model.DecodeFanout(jb.occ.Fanout)
	if err != nil {
		return nil, nil, err
	}
	if state == nil {
		return d.firstRound(ctx, jb)
	}
	if jb.occ.ManualRetry && len(state.Pending) == 0 {
		state.ReplayFailed(now)
	}
	var ids []string
	for id, p := range state.Pending {
		if !p.NextAt.After(now) || jb.occ.ManualRetry && p.Manual {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	subs, err := d.store.SubscriptionsByID(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	due := make([]*fanoutDelivery, 0, len(ids))
	for _, id := range ids {
		p := state.Pending[id]
		sub, ok := subs[id]
		dl := &fanoutDelivery{sub: sub, attempt: p.Attempts + 1, manual: p.Manual}
		switch {
		case !ok:
			dl.sub.ID, dl.status, dl.errText = id, model.OccurrenceFailed, "the subscription was deleted"
		case sub.Paused:
			dl.status, dl.errText = model.OccurrenceFailed, "the subscription is paused"
		}
		due = append(due, dl)
	}
	return state, due, nil
}

// firstRound resolves the subscriptions of the event's topic for this
// firing: active, matching the topic, sharing the event's tags (see
// receives), and passing their filter.
func (d *Dispatcher) firstRound(ctx context.Context, jb *job) (*model.Fanout, []*fanoutDelivery, error) {
	topic := jb.ev.Topic()
	subs, err := d.store.ActiveSubscriptionsFor(ctx, topic)
	if err != nil {
		return nil, nil, err
	}
	state := &model.Fanout{}
	var firing *fanout.Firing
	var due []*fanoutDelivery
	for _, sub := range subs {
		if !receives(&sub, jb.ev.Tags) {
			continue
		}
		state.Subscriptions++
		dl := &fanoutDelivery{sub: sub, attempt: 1, manual: jb.occ.Manual || jb.occ.ManualRetry}
		if sub.Filter != "" {
			if firing == nil {
				firing = newFiring(jb, topic)
			}
			ok, err := d.filters.match(sub.Filter, *firing)
			switch {
			case err != nil:
				dl.status, dl.errText = model.OccurrenceFailed, err.Error()
			case !ok:
				state.Filtered = append(state.Filtered, sub.ID)
				continue
			}
		}
		due = append(due, dl)
	}
	return state, due, nil
}

// receives reports whether a subscription receives the firings of an event
// with the given tags. An event without tags is for everyone subscribed;
// an event with tags goes to the subscriptions without tags (the
// installation's own) and to those sharing one of its tags — the firings of
// customer-42's events reach customer-42's subscriptions, not customer-43's.
func receives(sub *model.Subscription, eventTags []string) bool {
	if len(eventTags) == 0 || len(sub.Tags) == 0 {
		return true
	}
	for _, t := range sub.Tags {
		if slices.Contains(eventTags, t) {
			return true
		}
	}
	return false
}

// newFiring is what the filters of a firing see.
func newFiring(jb *job, topic string) *fanout.Firing {
	f := &fanout.Firing{Topic: topic, Name: jb.ev.Name, Tags: jb.ev.Tags, ScheduledAt: jb.occ.ScheduledAt}
	if len(jb.ev.Metadata) > 0 && string(jb.ev.Metadata) != "null" {
		_ = json.Unmarshal(jb.ev.Metadata, &f.Metadata)
	}
	body, err := actions.NewPayload(actions.Request{EventID: jb.ev.ID, OccurrenceID: jb.occ.ID,
		ScheduledAt: jb.occ.ScheduledAt, Name: jb.ev.Name, Description: jb.ev.Description, Tags: jb.ev.Tags,
		Metadata: json.RawMessage(jb.ev.Metadata), Topic: topic}).Marshal()
	if err == nil {
		_ = json.Unmarshal(body, &f.Payload)
	}
	return f
}

// sendAll sends the round's deliveries that are still to decide, at most
// fanoutParallelism at once. It stops sending, and reports errLeaseGone,
// once this process no longer holds the occurrence's slot: nothing of the
// round is then recorded, and the next owner sends it again under the same
// delivery ids.
func (d *Dispatcher) sendAll(ctx context.Context, jb *job, due []*fanoutDelivery) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, fanoutParallelism)
	var mu sync.Mutex
	var lost error
	for _, dl := range due {
		if dl.status != "" {
			continue // decided without sending (filter error, subscription gone)
		}
		sem <- struct{}{}
		mu.Lock()
		stop := lost != nil
		mu.Unlock()
		if stop {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := d.deliver(ctx, jb, dl); err != nil {
				mu.Lock()
				lost = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return lost
}

// deliver makes one subscription's delivery: admitted by its endpoint
// (disabled: failed without an attempt; throttled or open: deferred,
// uncounted), then sent as a webhook to the endpoint, classified by the
// event's retry policy.
func (d *Dispatcher) deliver(ctx context.Context, jb *job, dl *fanoutDelivery) error {
	if d.endpoints == nil {
		dl.status, dl.errText = model.OccurrenceFailed, "endpoints are not served here"
		return nil
	}
	adm := d.endpoints.Admit(ctx, dl.sub.EndpointID)
	switch {
	case adm.Disabled:
		dl.status, dl.errText = model.OccurrenceFailed, "the endpoint is disabled"
		return nil
	case !adm.Defer.IsZero():
		dl.status, dl.nextAt, dl.attempt = model.OccurrencePending, adm.Defer, dl.attempt-1
		return nil
	}
	if adm.Err == nil {
		release, retryAt, ok := d.deliveryShare(ctx, jb, dl, adm)
		if !ok {
			d.endpoints.Done(ctx, adm, false, false, "", 0)
			dl.status, dl.nextAt, dl.attempt = model.OccurrencePending, retryAt, dl.attempt-1
			return nil
		}
		defer release()
	}
	d.fanoutSends <- struct{}{}
	defer func() { <-d.fanoutSends }()
	started := d.clock.Now()
	dl.started = started
	out, err := d.send(ctx, jb, dl, adm, started)
	if err != nil {
		d.endpoints.Done(ctx, adm, false, false, "", 0)
		return err
	}
	ended := d.clock.Now()
	if out.Duration <= 0 {
		out.Duration = ended.Sub(started)
	}
	msg := ""
	if out.Err != nil {
		msg = out.Err.Error()
	}
	d.endpoints.Done(ctx, adm, adm.Err == nil, out.OK(), msg, out.Duration)
	v := jb.policy.Classify(out, dl.attempt, ended, d.cfg.AckTimeout, d.rnd)
	dl.out, dl.status, dl.errText, dl.gone = out, v.Status, v.Error, v.PauseEvent
	if v.Status == model.OccurrenceAwaitingAck || v.Status == model.OccurrenceRunning {
		dl.status = model.OccurrenceCompleted // an HTTP delivery never waits for an ack
	}
	if v.NextAttemptAt != nil {
		dl.nextAt = *v.NextAttemptAt
	}
	if dl.gone {
		dl.errText = msg + " (the subscription is paused)"
	}
	endpointID, subID := dl.sub.EndpointID, dl.sub.ID
	att := &model.Attempt{OccurrenceID: jb.occ.ID, EventID: jb.ev.ID, Attempt: dl.attempt, Manual: dl.manual,
		StartedAt: started.UTC(), DurationMS: out.Duration.Milliseconds(), Outcome: string(dl.status),
		Truncated: out.Truncated, LatenessMS: started.Sub(lateFrom(&jb.occ)).Milliseconds(),
		ScheduledAt: jb.occ.ScheduledAt, EndpointID: &endpointID, SubscriptionID: &subID}
	if out.StatusCode != 0 {
		code := out.StatusCode
		att.StatusCode = &code
	}
	if out.Excerpt != "" {
		excerpt := out.Excerpt
		att.ResponseExcerpt = &excerpt
	}
	if v.Error != "" {
		e := v.Error
		att.Error = &e
	}
	if out.Request != nil {
		s := out.Request.JSONString()
		att.RequestJSON = &s
	}
	dl.record = att
	return nil
}

// deliveryShare waits for the share of the workers a delivery counts
// against, as an attempt does (fairshare.go): its subscriber's tenant scope
// (subscriptionScope) and its endpoint's destination, so that one whose
// receivers hang or crawl slows only its own deliveries, never another
// tenant's firings. A delivery whose share stays full with nothing ending
// (a stalled share), or that waited its whole timeout, is not sent: ok
// false with when to try it again, uncounted.
func (d *Dispatcher) deliveryShare(ctx context.Context, jb *job, dl *fanoutDelivery, adm *endpoints.Admission) (
	release func(), retryAt time.Time, ok bool) {
	scope, timeout := subscriptionScope(&dl.sub), d.attemptTimeout(&jb.ev, adm)
	if release, ok := d.share.tryAcquire(scope, adm.Destination, timeout); ok {
		return release, time.Time{}, true
	}
	wait, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	release, retryAt, err := d.share.acquire(wait, scope, adm.Destination, func() bool { return true })
	if err != nil {
		return nil, retryAt, false
	}
	return release, time.Time{}, true
}

// subscriptionScope is the tenant scope a subscription's deliveries count
// against: its tags, as a token scoped to them has (auth.Principal.KeyScope,
// which ScopeOf reads for an event), or the installation's own ("*") for
// an untagged subscription.
func subscriptionScope(sub *model.Subscription) string {
	if len(sub.Tags) == 0 {
		return "*"
	}
	tags := slices.Clone(sub.Tags)
	slices.Sort(tags)
	return "tags:" + strings.Join(slices.Compact(tags), ",")
}

// send sends one admitted delivery as a webhook to its endpoint; it
// reports errLeaseGone, sending nothing, once this process no longer holds
// the occurrence's slot.
func (d *Dispatcher) send(ctx context.Context, jb *job, dl *fanoutDelivery, adm *endpoints.Admission,
	started time.Time) (actions.Outcome, error) {
	if adm.Err != nil {
		return actions.Outcome{Err: fmt.Errorf("resolve endpoint: %w", adm.Err), Retryable: adm.Retryable}, nil
	}
	delivery, err := d.deliveries.getAction(endpointWebhook(dl.sub.EndpointID))
	if err != nil {
		return actions.Outcome{Err: fmt.Errorf("resolve action: %w", err)}, nil
	}
	timeout := d.attemptTimeout(&jb.ev, adm)
	req := actions.Request{EventID: jb.ev.ID, OccurrenceID: jb.occ.ID, Attempt: dl.attempt, Manual: dl.manual,
		ScheduledAt: jb.occ.ScheduledAt, DispatchedAt: started.UTC(), Name: jb.ev.Name,
		Description: jb.ev.Description, Tags: jb.ev.Tags, Metadata: json.RawMessage(jb.ev.Metadata),
		Secrets: adm.Secrets, Timeout: timeout, Target: adm.Target, Topic: jb.ev.Topic(), SubscriptionID: dl.sub.ID}
	sendCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !d.usable(jb) {
		return actions.Outcome{}, errLeaseGone
	}
	sendCtx, span := tracing.StartAttempt(sendCtx, tracing.Attempt{EventID: jb.ev.ID, OccurrenceID: jb.occ.ID,
		Number: dl.attempt, ActionType: model.ActionTopic, Propagate: !jb.ev.NoTracePropagation})
	d.logSend(jb)
	out := delivery.Execute(sendCtx, req)
	tracing.EndAttempt(span, "", out.StatusCode, out.Err != nil)
	return out, nil
}

// endpointWebhook is the webhook action that delivers to an endpoint.
func endpointWebhook(endpointID string) model.Action {
	params, _ := json.Marshal(map[string]string{"endpoint_id": endpointID})
	return model.Action{Type: "webhook", Params: params}
}

// pauseGoneSubscription pauses a subscription whose receiver answered 410
// Gone: it asked not to be sent to again.
func (d *Dispatcher) pauseGoneSubscription(id string, now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := d.store.PauseSubscription(ctx, id, now); err != nil {
		d.log.Warn("pause a subscription whose receiver answered 410", zap.String("subscription_id", id),
			zap.Error(err))
	}
}

// filterCache keeps compiled subscription filters by their text: a filter
// is compiled once at save time to check it, and once per process to run.
type filterCache struct {
	mu    sync.Mutex
	byExp map[string]*fanout.Filter
}

// filterCacheSize bounds the compiled filters kept; past it the cache
// starts afresh (compiling is a fraction of a millisecond).
const filterCacheSize = 4096

func (c *filterCache) match(expr string, in fanout.Firing) (bool, error) {
	c.mu.Lock()
	f, ok := c.byExp[expr]
	c.mu.Unlock()
	if !ok {
		var err error
		if f, err = fanout.CompileFilter("filter", expr); err != nil {
			return false, fmt.Errorf("the filter no longer compiles: %w", err)
		}
		c.mu.Lock()
		if c.byExp == nil || len(c.byExp) >= filterCacheSize {
			c.byExp = map[string]*fanout.Filter{}
		}
		c.byExp[expr] = f
		c.mu.Unlock()
	}
	return f.Match(in)
}
