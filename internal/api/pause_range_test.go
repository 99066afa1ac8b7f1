package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A pause until a moment covers [now, until) only: an occurrence planned or
// moved after until stays pending (it was once marked skipped, reason
// paused), while those inside the pause are skipped.
func TestPauseUntilCoversOnlyTheInstantsBeforeIt(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
			ev := e.createEvent(e.master, map[string]any{"name": "daily", "start_time": start.Format(time.RFC3339),
				"rrule": "FREQ=DAILY;COUNT=3", "webhook": "http://127.0.0.1:9999/h"})
			id := ev["id"].(string)
			var occs []map[string]any
			e.do("GET", "/events/"+id+"/occurrences?order=scheduled_at", e.master, nil).json(t, &occs)
			require.NotEmpty(t, occs)
			first := occs[0]["id"].(string)
			movedTo := start.Add(2 * time.Hour)
			res := e.do("POST", "/occurrences/"+first+"/move", e.master, map[string]any{"to": movedTo.Format(time.RFC3339)})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)

			until := start.Add(time.Hour) // after the first planned instant, before where it moved
			res = e.do("POST", "/events/"+id+"/pause", e.master, map[string]any{"until": until.Format(time.RFC3339)})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)

			e.do("GET", "/events/"+id+"/occurrences?order=scheduled_at", e.master, nil).json(t, &occs)
			require.NotEmpty(t, occs)
			for _, o := range occs {
				at, err := time.Parse(time.RFC3339Nano, o["scheduled_at"].(string))
				require.NoError(t, err)
				if at.Before(until) {
					require.Equal(t, "skipped", o["status"], "inside the pause: %v", o)
					continue
				}
				require.Equal(t, "pending", o["status"], "after the pause ends: %v", o)
				require.Nil(t, o["reason"], "%v", o)
			}
			var moved map[string]any
			e.do("GET", "/occurrences/"+first, e.master, nil).json(t, &moved)
			require.Equal(t, "pending", moved["status"], "moved after the pause: %v", moved)
		})
	}
}
