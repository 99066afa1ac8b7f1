package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/model"
)

// preparedParams is a delivery that remembers the params it was prepared
// from, so a test can tell which version it got.
type preparedParams struct{ params string }

func (p *preparedParams) Destination() string       { return "" }
func (p *preparedParams) AckTimeout() time.Duration { return 0 }
func (p *preparedParams) Execute(context.Context, actions.Request) actions.Outcome {
	return actions.Outcome{}
}

// countingPrepare counts its calls; params "bad" fail to prepare.
func countingPrepare(calls *atomic.Int32) prepareFunc {
	return func(_ string, params json.RawMessage) (actions.Delivery, error) {
		calls.Add(1)
		if string(params) == `"bad"` {
			return nil, errors.New("bad params")
		}
		return &preparedParams{params: string(params)}, nil
	}
}

func versioned(id string, version int64, params string) *model.Event {
	return &model.Event{ID: id, Version: version, Action: model.Action{Type: "webhook", Params: json.RawMessage(params)}}
}

func TestDeliveriesPrepareOncePerAction(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	c := newDeliveries(8, countingPrepare(&calls))

	first, err := c.get(versioned("e1", 1, `"v1"`))
	require.NoError(t, err)
	for range 5 {
		again, err := c.get(versioned("e1", 1, `"v1"`))
		require.NoError(t, err)
		require.Same(t, first, again, "later attempts of a version reuse its delivery")
	}
	require.Equal(t, int32(1), calls.Load(), "one Prepare for six attempts of one version")

	edited, err := c.get(versioned("e1", 2, `"v2"`))
	require.NoError(t, err)
	require.Equal(t, `"v2"`, edited.(*preparedParams).params, "an edited event runs its new params")
	require.Equal(t, int32(2), calls.Load(), "new params are prepared afresh")

	retimed, err := c.get(versioned("e1", 3, `"v2"`))
	require.NoError(t, err)
	require.Same(t, edited, retimed, "an edit that left the action alone keeps its delivery")
	require.Equal(t, int32(2), calls.Load())
}

// Events with the same action (one URL, one endpoint) share its
// preparation; the same params under another type do not.
func TestDeliveriesAreSharedByEventsWithTheSameAction(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	c := newDeliveries(8, countingPrepare(&calls))
	first, err := c.get(versioned("e1", 1, `{"url":"https://example.com/hook"}`))
	require.NoError(t, err)
	for _, id := range []string{"e2", "e3", "e4"} {
		d, err := c.get(versioned(id, 1, `{"url":"https://example.com/hook"}`))
		require.NoError(t, err)
		require.Same(t, first, d)
	}
	require.Equal(t, int32(1), calls.Load(), "four events, one action, one Prepare")

	other := versioned("e5", 1, `{"url":"https://example.com/hook"}`)
	other.Action.Type = "api_call"
	d, err := c.get(other)
	require.NoError(t, err)
	require.NotSame(t, first, d, "another action type is another action")
	require.Equal(t, int32(2), calls.Load())
}

// Several occurrences of one event fire together: still one Prepare.
func TestDeliveriesPrepareOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	c := newDeliveries(8, countingPrepare(&calls))
	var wg sync.WaitGroup
	got := make([]actions.Delivery, 16)
	for i := range got {
		wg.Go(func() {
			d, err := c.get(versioned("e1", 3, `"v3"`))
			if err != nil {
				t.Error(err)
			}
			got[i] = d
		})
	}
	wg.Wait()
	require.Equal(t, int32(1), calls.Load())
	for _, d := range got {
		require.Same(t, got[0], d)
	}
}

func TestDeliveriesFailureIsNotKept(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	c := newDeliveries(8, countingPrepare(&calls))
	for range 2 {
		d, err := c.get(versioned("e1", 1, `"bad"`))
		require.Error(t, err)
		require.Nil(t, d)
	}
	require.Equal(t, int32(2), calls.Load(), "each attempt reports the failure afresh")
	require.Zero(t, c.recent.Len())
}

// Deleted and idle actions do not stay: the least recently used entry goes
// once the bound is reached.
func TestDeliveriesAreBounded(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	c := newDeliveries(2, countingPrepare(&calls))
	for _, id := range []string{"a", "b", "a", "c"} { // "b" is the least recently used when "c" arrives
		_, err := c.get(versioned(id, 1, `"`+id+`"`))
		require.NoError(t, err)
	}
	require.Equal(t, 2, c.recent.Len())
	require.Equal(t, int32(3), calls.Load())
	_, err := c.get(versioned("a", 1, `"a"`))
	require.NoError(t, err)
	require.Equal(t, int32(3), calls.Load(), "a kept its delivery")
	_, err = c.get(versioned("b", 1, `"b"`))
	require.NoError(t, err)
	require.Equal(t, int32(4), calls.Load(), "b was evicted and is prepared again")
}
