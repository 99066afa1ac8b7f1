package notify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/secrets"
	"github.com/qhronos/qhronos/internal/startstop"
)

// ChannelStore reads the channels managed through the API.
type ChannelStore interface {
	ListNotificationChannels(ctx context.Context) ([]model.NotificationChannel, error)
}

// Observer counts notices by channel type, kind and outcome (sent, failed,
// dropped, suppressed).
type Observer interface {
	ObserveNotice(channelType string, kind string, outcome string)
}

// Notice outcomes for Observer.
const (
	OutcomeSent       = "sent"
	OutcomeFailed     = "failed"
	OutcomeDropped    = "dropped"    // the queue was full
	OutcomeSuppressed = "suppressed" // the same notice went out less than min_interval ago
)

// Deps are the notifier's collaborators.
type Deps struct {
	// Channels are the configured channels, always in force.
	Channels []Channel
	// Store holds the channels managed through the API; nil means none.
	Store ChannelStore
	// Box opens the stored channels' secrets.
	Box *secrets.Box
	// HTTP is the outbound-guarded client webhooks are sent with.
	HTTP *http.Client
	SMTP SMTP
	// DefaultSecret signs webhooks of channels without a secret.
	DefaultSecret string
	// Now is the clock of digests and min_interval (default time.Now).
	Now      func() time.Time
	Logger   *zap.Logger
	Observer Observer // may be nil
	// Recorder keeps each send's outcome; nil records nothing.
	Recorder NoticeRecorder
}

// Options tune the notifier; zero values take the defaults.
type Options struct {
	DigestInterval time.Duration // default 5m
	MinInterval    time.Duration // default 1m; negative disables
	// Tick is how often due digests are checked (default 1s).
	Tick time.Duration
	// Refresh is how often stored channels are re-read (default 30s).
	Refresh time.Duration
	// QueueSize bounds the notices waiting to be handled (default 1024).
	QueueSize int
	// WebhookAttempts and WebhookBackoff retry a webhook (defaults 3, 1s).
	WebhookAttempts int
	WebhookBackoff  time.Duration
	// SendTimeout bounds one channel's send, retries included (default 1m).
	SendTimeout time.Duration
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.DigestInterval, 5*time.Minute)
	def(&o.MinInterval, time.Minute)
	def(&o.Tick, time.Second)
	def(&o.Refresh, 30*time.Second)
	def(&o.WebhookBackoff, time.Second)
	def(&o.SendTimeout, time.Minute)
	if o.QueueSize <= 0 {
		o.QueueSize = 1024
	}
	if o.WebhookAttempts <= 0 {
		o.WebhookAttempts = 3
	}
	return o
}

// sender delivers one message to one channel and returns the receiver's
// answer (an HTTP status, the mail server's acceptance).
type sender interface {
	send(ctx context.Context, ch Channel, m message) (answer string, err error)
}

// NoticeRecorder keeps the notices sent to stored channels
// (repository.Store), for GET /notification-channels/{id}/notices.
type NoticeRecorder interface {
	RecordNotice(ctx context.Context, n model.SentNotice) error
}

// Notifier queues notices and sends them to every channel that wants
// them. Notify never blocks; one goroutine handles the queue, sends
// digests when due and re-reads the stored channels, so channels keep
// working while the database is down.
type Notifier struct {
	startstop.Base
	d       Deps
	opts    Options
	log     *zap.Logger
	queue   chan Notice
	wake    chan struct{}
	senders map[string]sender
	dropped atomic.Uint64

	mu       sync.Mutex // one RunOnce at a time; guards the state below
	stored   []Channel
	digests  map[string]*digest   // channel id → failures collected
	lastSent map[string]time.Time // notice key → when it last went out
}

// New builds a notifier; Start runs its loop.
func New(d Deps, opts Options) *Notifier {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if d.HTTP == nil {
		d.HTTP = http.DefaultClient
	}
	opts = opts.withDefaults()
	return &Notifier{d: d, opts: opts, log: d.Logger.Named("notify"),
		queue: make(chan Notice, opts.QueueSize), wake: make(chan struct{}, 1),
		senders: map[string]sender{
			model.ChannelWebhook: &webhookSender{client: d.HTTP, defaultSecret: d.DefaultSecret,
				attempts: opts.WebhookAttempts, backoff: opts.WebhookBackoff, now: time.Now},
			model.ChannelEmail: &emailSender{cfg: d.SMTP, now: d.Now},
		},
		digests: map[string]*digest{}, lastSent: map[string]time.Time{}}
}

// Notify queues n for every channel that wants its kind; it never blocks
// (a full queue drops and counts) and is a no-op on a nil *Notifier.
func (n *Notifier) Notify(_ context.Context, notice Notice) {
	if n == nil {
		return
	}
	if notice.At.IsZero() {
		notice.At = n.d.Now()
	}
	select {
	case n.queue <- notice:
	default:
		n.dropped.Add(1)
		n.observe("", notice.Kind, OutcomeDropped)
		return
	}
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// Wants reports whether any channel, configured or stored, wants notices
// of kind (false on a nil *Notifier): the scanner reads nothing for a kind
// no one wants.
func (n *Notifier) Wants(kind Kind) bool {
	if n == nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, chs := range [][]Channel{n.d.Channels, n.stored} {
		for _, ch := range chs {
			if ch.Wants(kind) {
				return true
			}
		}
	}
	return false
}

// Dropped counts notices lost to a full queue.
func (n *Notifier) Dropped() uint64 { return n.dropped.Load() }

// Start runs the loop until ctx ends or Stop; pending digests are sent on
// the way out.
func (n *Notifier) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := n.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	if err := n.Reload(ctx); err != nil {
		n.log.Warn("read notification channels", zap.Error(err))
	}
	go func() {
		defer stopped()
		n.run(ctx)
	}()
	return nil
}

func (n *Notifier) run(ctx context.Context) {
	tick := time.NewTicker(n.opts.Tick)
	defer tick.Stop()
	refresh := time.NewTicker(n.opts.Refresh)
	defer refresh.Stop()
	for {
		select {
		case <-ctx.Done():
			// Send what was collected rather than lose it with the process.
			flushCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			n.runOnce(flushCtx, true)
			cancel()
			return
		case <-n.wake:
		case <-tick.C:
		case <-refresh.C:
			if err := n.Reload(ctx); err != nil {
				n.log.Warn("read notification channels", zap.Error(err))
			}
			continue
		}
		n.runOnce(ctx, false)
	}
}

// Reload re-reads the stored channels; on failure the ones read before stay
// in force.
func (n *Notifier) Reload(ctx context.Context) error {
	if n.d.Store == nil {
		return nil
	}
	rows, err := n.d.Store.ListNotificationChannels(ctx)
	if err != nil {
		return err
	}
	chans := make([]Channel, 0, len(rows))
	for _, r := range rows {
		ch, err := openChannel(n.d.Box, r)
		if err != nil {
			n.log.Error("notification channel unusable", zap.String("channel_id", r.ID), zap.Error(err))
			continue
		}
		chans = append(chans, ch)
	}
	n.mu.Lock()
	n.stored = chans
	n.mu.Unlock()
	return nil
}

// RunOnce handles every queued notice — sending it at once, or adding a
// failed delivery to the digests — and sends the digests that are due. It
// returns when every send has ended.
func (n *Notifier) RunOnce(ctx context.Context) { n.runOnce(ctx, false) }

// job is one message for one channel.
type job struct {
	ch  Channel
	msg message
}

func (n *Notifier) runOnce(ctx context.Context, flushAll bool) {
	n.mu.Lock()
	now := n.d.Now()
	channels := append(append([]Channel(nil), n.d.Channels...), n.stored...)
	var jobs []job
	for more := true; more; {
		select {
		case notice := <-n.queue:
			jobs = append(jobs, n.handle(notice, channels, now)...)
		default:
			more = false
		}
	}
	jobs = append(jobs, n.dueDigests(channels, now, flushAll)...)
	n.forget(now)
	n.mu.Unlock()
	n.sendAll(ctx, jobs)
}

// handle decides what one notice becomes: digest entries, or one message
// for the channels that want it unless the same went out too recently.
func (n *Notifier) handle(notice Notice, channels []Channel, now time.Time) []job {
	if notice.Kind == DeliveryFailed {
		for _, ch := range channels {
			if !ch.Takes(notice) {
				continue
			}
			d := n.digests[ch.ID]
			if d == nil {
				d = &digest{since: now}
				n.digests[ch.ID] = d
			}
			d.add(notice)
		}
		return nil
	}
	key := string(notice.Kind) + "|" + notice.EndpointID + "|" + notice.EventID + "|" + notice.Fields["dependency"]
	if last, ok := n.lastSent[key]; ok && n.opts.MinInterval > 0 && now.Sub(last) < n.opts.MinInterval {
		n.observe("", notice.Kind, OutcomeSuppressed)
		return nil
	}
	n.lastSent[key] = now
	msg := noticeMessage(notice)
	var jobs []job
	for _, ch := range channels {
		if ch.Takes(notice) {
			jobs = append(jobs, job{ch: ch, msg: msg})
		}
	}
	return jobs
}

// dueDigests renders the digests whose interval has passed (all of them
// when flushing); digests of channels that no longer exist are dropped.
func (n *Notifier) dueDigests(channels []Channel, now time.Time, flushAll bool) []job {
	byID := make(map[string]Channel, len(channels))
	for _, ch := range channels {
		byID[ch.ID] = ch
	}
	var jobs []job
	for id, d := range n.digests {
		ch, ok := byID[id]
		switch {
		case !ok || !ch.Wants(DeliveryFailed):
			delete(n.digests, id)
		case flushAll || !now.Before(d.since.Add(n.opts.DigestInterval)):
			jobs = append(jobs, job{ch: ch, msg: d.message(now)})
			delete(n.digests, id)
		}
	}
	return jobs
}

// forget drops min_interval entries that can no longer suppress anything.
func (n *Notifier) forget(now time.Time) {
	for k, t := range n.lastSent {
		if now.Sub(t) >= n.opts.MinInterval {
			delete(n.lastSent, k)
		}
	}
}

func (n *Notifier) sendAll(ctx context.Context, jobs []job) {
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := n.send(ctx, j.ch, j.msg, false); err != nil {
				n.log.Warn("notice not sent", zap.String("channel", j.ch.Name), zap.String("type", j.ch.Type),
					zap.String("kind", string(j.msg.Kind)), zap.Error(err))
			}
		}()
	}
	wg.Wait()
}

func (n *Notifier) send(ctx context.Context, ch Channel, m message, test bool) error {
	s, ok := n.senders[ch.Type]
	if !ok {
		n.observe(ch.Type, m.Kind, OutcomeFailed)
		return fmt.Errorf("unknown channel type %q", ch.Type)
	}
	sendCtx, cancel := context.WithTimeout(ctx, n.opts.SendTimeout)
	defer cancel()
	answer, err := s.send(sendCtx, ch, m)
	outcome := OutcomeSent
	if err != nil {
		outcome = OutcomeFailed
	}
	n.observe(ch.Type, m.Kind, outcome)
	n.record(ctx, ch, m, test, answer, err)
	return err
}

// record keeps one send's outcome for the channel's recent notices. The
// error text is the sender's, which already shows URLs redacted; losing a
// record (the database is down) loses no notice, so it is only logged.
func (n *Notifier) record(ctx context.Context, ch Channel, m message, test bool, answer string, sendErr error) {
	if n.d.Recorder == nil {
		return
	}
	rec := model.SentNotice{ChannelID: ch.ID, At: n.d.Now(), Kind: string(m.Kind), Summary: m.Subject,
		Outcome: model.NoticeDelivered, Answer: answer, Test: test}
	if sendErr != nil {
		rec.Outcome, rec.Answer = model.NoticeFailed, sendErr.Error()
	}
	// The send may have used up ctx (a slow receiver): the record gets
	// its own short deadline.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := n.d.Recorder.RecordNotice(ctx, rec); err != nil {
		n.log.Warn("record notice", zap.String("channel", ch.Name), zap.Error(err))
	}
}

// SendTest sends a test notice to ch now, bypassing queue, filters and
// min_interval, and returns the channel's answer.
func (n *Notifier) SendTest(ctx context.Context, ch Channel, by string) error {
	if n == nil {
		return errors.New("notifications are not running")
	}
	now := n.d.Now()
	msg := noticeMessage(Notice{Kind: Test, At: now, Title: fmt.Sprintf("Test notice for channel %s", ch.Name),
		Text: fmt.Sprintf("This is a test notice, sent on request of %s. Channel %s (%s) works.", by, ch.Name,
			ch.Type), Fields: map[string]string{"requested_by": by}})
	return n.send(ctx, ch, msg, true)
}

func (n *Notifier) observe(channelType string, kind Kind, outcome string) {
	if n.d.Observer != nil {
		n.d.Observer.ObserveNotice(channelType, string(kind), outcome)
	}
}
