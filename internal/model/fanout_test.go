package model_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
)

// A fan-out's rounds: what each delivery's result makes of the occurrence,
// and what a replay makes due again.
func TestFanoutRounds(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	f := &model.Fanout{Subscriptions: 4, Filtered: []string{"d"}}
	f.Settle("a", model.OccurrenceCompleted, 1, false, time.Time{}, "")
	f.Settle("b", model.OccurrenceRetrying, 1, false, t0.Add(2*time.Second), "503")
	f.Settle("c", model.OccurrencePending, 0, false, t0.Add(time.Second), "") // deferred by its endpoint
	status, next, msg := f.Outcome()
	require.Equal(t, model.OccurrenceRetrying, status)
	require.Equal(t, t0.Add(time.Second), *next, "the earliest pending delivery")
	require.Equal(t, "2 of 3 deliveries pending", *msg)
	require.Equal(t, model.FanoutSummary{Subscriptions: 4, Delivered: 1, Filtered: 1, Pending: 2}, f.Summary())

	f.Settle("c", model.OccurrenceCompleted, 1, false, time.Time{}, "")
	f.Settle("b", model.OccurrenceFailed, 2, false, time.Time{}, "503 (gave up after 2 attempts)")
	status, next, msg = f.Outcome()
	require.Equal(t, model.OccurrenceFailed, status)
	require.Nil(t, next)
	require.Equal(t, "1 of 3 deliveries failed (subscription b: 503 (gave up after 2 attempts))", *msg)

	// The document survives its storage.
	back, err := model.DecodeFanout(f.Encode())
	require.NoError(t, err)
	require.Equal(t, f.Summary(), back.Summary())

	// A replay of the failures makes them due, manual, with a fresh budget.
	back.ReplayFailed(t0)
	require.Equal(t, map[string]model.FanoutPending{"b": {NextAt: t0, Manual: true}}, back.Pending)
	require.Empty(t, back.Failed)

	// One subscription's replay: a delivered one is sent again; a filtered
	// one, or one the fan-out never had, has nothing to replay.
	require.True(t, back.ReplayOne("a", true, t0))
	require.Equal(t, 1, back.Delivered)
	require.False(t, back.ReplayOne("d", false, t0))
	require.False(t, back.ReplayOne("z", false, t0))
	status, _, _ = back.Outcome()
	require.Equal(t, model.OccurrenceRetrying, status)
}

// An event's topic is its action of type topic.
func TestEventTopic(t *testing.T) {
	ev := model.Event{Action: model.TopicAction("digest.daily")}
	require.Equal(t, "digest.daily", ev.Topic())
	require.JSONEq(t, `{"topic":"digest.daily"}`, string(ev.Action.Params))
	ev.Action = model.Action{Type: "webhook", Params: []byte(`{"topic":"x"}`)}
	require.Empty(t, ev.Topic())
}
