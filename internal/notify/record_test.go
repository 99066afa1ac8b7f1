package notify_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/notify"
)

// recorder keeps what RecordNotice was given.
type recorder struct {
	mu  sync.Mutex
	got []model.SentNotice
}

func (r *recorder) RecordNotice(_ context.Context, n model.SentNotice) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, n)
	return nil
}

func (r *recorder) all() []model.SentNotice {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]model.SentNotice(nil), r.got...)
}

// Every send to a channel is recorded once, after its retries, with the
// receiver's answer or the error; a test send is marked as one.
func TestEachSendIsRecordedWithItsAnswer(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, testSecret)
	r.fail = 1 // the first send is retried once, then delivered
	rec := &recorder{}
	ch := notify.Channel{ID: "4f0c7a9e-3c1b-4d2e-9a8f-1b2c3d4e5f60", Name: "ops", Type: "webhook",
		URL: r.srv.URL + "/hook", Secret: testSecret}
	n := notify.New(notify.Deps{Channels: []notify.Channel{ch}, HTTP: loopbackClient(), Now: newClock().Now,
		Recorder: rec}, notify.Options{WebhookAttempts: 2, WebhookBackoff: time.Millisecond})
	ctx := context.Background()

	n.Notify(ctx, circuitOpened("ep-1"))
	n.RunOnce(ctx)
	require.NoError(t, n.SendTest(ctx, ch, "alice"))
	r.srv.Close()
	require.Error(t, n.SendTest(ctx, ch, "alice"))

	got := rec.all()
	require.Len(t, got, 3, "one record per send, not per retry")
	require.Equal(t, model.SentNotice{ChannelID: ch.ID, At: t0, Kind: "circuit_opened",
		Summary: "Endpoint ep-1: circuit opened", Outcome: model.NoticeDelivered, Answer: "HTTP 204"}, got[0])
	require.Equal(t, model.SentNotice{ChannelID: ch.ID, At: t0, Kind: "test", Summary: "Test notice for channel ops",
		Outcome: model.NoticeDelivered, Answer: "HTTP 204", Test: true}, got[1])
	require.Equal(t, model.NoticeFailed, got[2].Outcome)
	require.True(t, got[2].Test)
	require.Contains(t, got[2].Answer, "post notice")
}
