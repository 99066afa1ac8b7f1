package scheduler_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/hub"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/scheduler/schedulertest"
)

// countingAction counts the Prepare calls of the real action it wraps.
type countingAction struct {
	actions.Action
	prepared atomic.Int32
}

func (c *countingAction) Prepare(params json.RawMessage) (actions.Delivery, error) {
	c.prepared.Add(1)
	return c.Action.Prepare(params)
}

// An event's params are prepared once for all the attempts of one version;
// an edit (a new version) is prepared afresh and its new URL is used.
func TestDispatcherPreparesOncePerEventVersion(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig()) // 3 attempts from 10 s, jitter fixed at 0.5
		webhook := &countingAction{Action: actions.NewWebhook(actions.HTTPConfig{
			Outbound: outbound.Options{AllowLoopback: true}, Now: e.clock.Now})}
		reg := actions.NewRegistry()
		require.NoError(t, reg.Register(webhook))
		e.disp = e.newDispatcher(e.cfg, reg)
		e.recv.Respond(func(schedulertest.Delivery, int) schedulertest.Reply {
			return schedulertest.Reply{Status: http.StatusServiceUnavailable}
		})
		ev := e.create(e.event(nil))

		e.clock.Set(t0.Add(time.Minute))
		require.Equal(t, 1, e.dispatch())
		e.clock.Advance(5 * time.Second)
		require.Equal(t, 1, e.dispatch())
		require.Equal(t, model.OccurrenceRetrying, e.occurrences(ev.ID)[0].Status)
		require.Len(t, e.recv.Deliveries(), 2)
		require.Equal(t, int32(1), webhook.prepared.Load(), "two attempts of one version, one Prepare")

		// The event is edited to another receiver before its last attempt.
		moved := schedulertest.NewReceiver(t)
		edited := e.reload(ev.ID)
		edited.Action.Params, _ = json.Marshal(map[string]string{"url": moved.URL + "/hook"})
		require.NoError(t, s.UpdateEvent(context.Background(), &edited, edited.Version))

		e.clock.Advance(10 * time.Second)
		require.Equal(t, 1, e.dispatch())
		occ := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceCompleted, occ.Status)
		require.Equal(t, 3, occ.AttemptCount)
		require.Len(t, moved.Deliveries(), 1, "the edited URL received the third attempt")
		require.Equal(t, occ.ID, moved.Deliveries()[0].WebhookID)
		require.Len(t, e.recv.Deliveries(), 2, "the old URL received nothing more")
		require.Equal(t, int32(2), webhook.prepared.Load(), "the new version was prepared once")
	})
}

// Stored params that no longer prepare fail the attempt for good, without
// a delivery, and say why.
func TestUnpreparableActionFailsTheAttempt(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		tests := []struct {
			name    string
			action  model.Action
			wantErr string
		}{
			{"unknown type", model.Action{Type: "carrier-pigeon", Params: json.RawMessage(`{}`)},
				`resolve action: unknown action type: "carrier-pigeon"`},
			{"invalid params", model.Action{Type: "webhook", Params: json.RawMessage(`{"url":"ftp://x.example/"}`)},
				"resolve action: action.params.url"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e := newEnv(t, s, testConfig())
				ev := e.create(e.event(func(ev *model.Event) { ev.Action = tt.action }))
				e.clock.Set(t0.Add(time.Minute))
				require.Equal(t, 1, e.dispatch())
				occ := e.occurrences(ev.ID)[0]
				require.Equal(t, model.OccurrenceFailed, occ.Status, "no retry can prepare it")
				require.Equal(t, 1, occ.AttemptCount)
				require.NotNil(t, occ.ErrorMessage)
				require.Contains(t, *occ.ErrorMessage, tt.wantErr)
				require.Empty(t, e.recv.Deliveries())
			})
		}
	})
}

// A websocket require_ack delivery waits for its ack until the ack_timeout
// it was prepared with, else until the dispatcher's default; then the
// rescuer retries it.
func TestWebSocketAckTimeoutSetsTheAckDeadline(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig()
		cfg.AckTimeout = 45 * time.Second
		e := newEnv(t, s, cfg)
		coord := coordination.NewLocal(e.clock.Now)
		t.Cleanup(func() { _ = coord.Close() })
		h := hub.New(coord, "test", zaptest.NewLogger(t))
		client := hub.NewListener("acme", nil, func([]string) bool { return true }, 8)
		h.Add(client)
		reg := actions.NewRegistry()
		require.NoError(t, reg.Register(actions.NewWebSocket(h, 0)))
		e.disp = e.newDispatcher(cfg, reg)

		withParams := func(params string) *model.Event {
			return e.create(e.event(func(ev *model.Event) {
				ev.Action = model.Action{Type: "websocket", Params: json.RawMessage(params)}
			}))
		}
		own := withParams(`{"client_name":"acme","require_ack":true,"ack_timeout":"90s"}`)
		byDefault := withParams(`{"client_name":"acme","require_ack":true}`)

		fired := t0.Add(time.Minute)
		e.clock.Set(fired)
		require.Equal(t, 2, e.dispatch())
		for range 2 {
			select {
			case frame := <-client.Queue():
				var f struct {
					RequireAck bool `json:"require_ack"`
				}
				require.NoError(t, json.Unmarshal(frame, &f))
				require.True(t, f.RequireAck)
			default:
				t.Fatal("the client received fewer than two frames")
			}
		}
		for ev, want := range map[*model.Event]time.Duration{own: 90 * time.Second, byDefault: 45 * time.Second} {
			occ := e.occurrences(ev.ID)[0]
			require.Equal(t, model.OccurrenceAwaitingAck, occ.Status)
			require.NotNil(t, occ.LeaseExpiresAt)
			require.WithinDuration(t, fired.Add(want), *occ.LeaseExpiresAt, time.Millisecond, "ack deadline")
		}

		e.clock.Set(fired.Add(46 * time.Second))
		n, err := e.resc.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 1, n, "only the default deadline has passed")
		require.Equal(t, model.OccurrenceAwaitingAck, e.occurrences(own.ID)[0].Status)
		require.NotEqual(t, model.OccurrenceAwaitingAck, e.occurrences(byDefault.ID)[0].Status)

		e.clock.Set(fired.Add(91 * time.Second))
		n, err = e.resc.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 1, n, "then the 90 s one")
		require.NotEqual(t, model.OccurrenceAwaitingAck, e.occurrences(own.ID)[0].Status)
	})
}
