package client_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
)

// The free-form calls send the members as given: null clears a member on
// update, and a schedule object passes through whole.
func TestFieldsCallsSendMembersAsGiven(t *testing.T) {
	t.Parallel()
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+string(b))
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/schedules/preview" {
			_, _ = io.WriteString(w, `{"timezone":"UTC","instants":[{"utc":"2030-01-01T00:00:00Z","local":"2030-01-01T00:00:00Z","skipped":true,"reason":"calendar"}]}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"e1","name":"n","status":"active","timezone":"UTC","start_time":"2030-01-01T00:00:00Z",`+
			`"action":{"type":"webhook"},"tags":[],"created_at":"2030-01-01T00:00:00Z","updated_at":"2030-01-01T00:00:00Z","version":1,"webhook":""}`)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, client.WithRetries(0))
	require.NoError(t, err)
	ctx := context.Background()

	ev, err := c.Events.UpdateFields(ctx, "e1", map[string]any{"jitter": nil, "calendars": []any{}})
	require.NoError(t, err)
	require.Equal(t, "e1", ev.ID)
	_, err = c.Events.CreateFields(ctx, map[string]any{"name": "n", "schedule": map[string]any{"frequency": "daily", "by_hour": []int{9}}})
	require.NoError(t, err)
	p, err := c.Schedules.PreviewFields(ctx, map[string]any{"rrule": "FREQ=DAILY", "calendars": []any{map[string]any{"id": "c", "policy": "roll_forward"}}})
	require.NoError(t, err)
	require.True(t, *p.Instants[0].Skipped)

	require.Len(t, got, 3)
	require.Equal(t, `PUT /events/e1 {"calendars":[],"jitter":null}`, got[0])
	var created map[string]any
	require.NoError(t, json.Unmarshal([]byte(got[1][len("POST /events "):]), &created))
	require.Equal(t, map[string]any{"frequency": "daily", "by_hour": []any{float64(9)}}, created["schedule"])
	require.Contains(t, got[2], `"policy":"roll_forward"`)
}
