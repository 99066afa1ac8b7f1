package api

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// GET /events?topic=NAME lists the events that target a topic — the ones
// that keep DELETE /topics/{name} refused — and nothing else: not another
// topic's, not a webhook event's. It combines with the other filters, pages
// by the Link header and keeps a scoped token to its own events; a name
// that is not a topic name is a 400 naming topic, a well-formed one no
// topic has lists nothing.
func TestEventsThatTargetATopic(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			for _, name := range []string{"digest.daily", "digest.weekly"} {
				res := e.do("POST", "/topics", e.master, map[string]any{"name": name})
				require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			}
			teamA := e.mint("write", []string{"team-a"})
			create := func(token, name, topic, tag string) string {
				t.Helper()
				body := eventBody(tag)
				body["name"] = name
				if topic != "" {
					delete(body, "webhook")
					body["topic"] = topic
				}
				return e.createEvent(token, body)["id"].(string)
			}
			morning := create(teamA, "morning digest", "digest.daily", "team-a")
			noon := create(teamA, "noon digest", "digest.daily", "team-a")
			evening := create(teamA, "evening digest", "digest.daily", "team-a")
			theirs := create(e.master, "their digest", "digest.daily", "team-b")
			weekly := create(teamA, "weekly digest", "digest.weekly", "team-a")
			plain := create(teamA, "plain digest", "", "team-a")

			// list pages through GET /events?query by its Link header and
			// returns every id, in order, and how many pages it took.
			list := func(token, query string) (ids []string, pages int) {
				t.Helper()
				path := "/events?" + query
				for path != "" {
					res := e.do("GET", path, token, nil)
					require.Equal(t, http.StatusOK, res.Status, "%s: %s", path, res.Body)
					var evs []struct {
						ID string `json:"id"`
					}
					res.json(t, &evs)
					for _, ev := range evs {
						ids = append(ids, ev.ID)
					}
					pages++
					require.Less(t, pages, 20, "paging does not end")
					path = ""
					if m := nextLink.FindStringSubmatch(res.Header.Get("Link")); m != nil {
						path = m[1]
						require.Contains(t, path, "topic=digest.", "the next page keeps the filter")
					}
				}
				return ids, pages
			}
			daily, _ := list(e.master, "topic=digest.daily")
			require.ElementsMatch(t, []string{morning, noon, evening, theirs}, daily,
				"the daily digest's events, not the weekly one's (%s) nor the webhook event (%s)", weekly, plain)
			got, _ := list(teamA, "topic=digest.daily")
			require.ElementsMatch(t, []string{morning, noon, evening}, got, "a scoped token lists its own only")
			got, _ = list(e.master, "topic=digest.weekly")
			require.Equal(t, []string{weekly}, got)
			got, _ = list(e.master, "topic=digest.daily&tags=team-b")
			require.Equal(t, []string{theirs}, got, "with tags")
			got, _ = list(e.master, "topic=digest.daily&q=NOON")
			require.Equal(t, []string{noon}, got, "with the name search")
			got, _ = list(e.master, "topic=digest.daily&status=inactive")
			require.Empty(t, got, "with status")
			got, _ = list(e.master, "topic=digest.monthly")
			require.Empty(t, got, "a well-formed name no topic has lists nothing")

			// Page by page, newest first as without the filter: every event
			// once, in the order of one page.
			paged, pages := list(e.master, "topic=digest.daily&limit=1")
			require.Equal(t, daily, paged)
			require.GreaterOrEqual(t, pages, 4)
			paged, pages = list(teamA, "topic=digest.daily&limit=2")
			require.ElementsMatch(t, []string{morning, noon, evening}, paged)
			require.GreaterOrEqual(t, pages, 2)

			for _, bad := range []string{"Digest.Daily", "digest..daily", "digest.*", "digest daily",
				strings.Repeat("d", 101)} {
				res := e.do("GET", "/events?topic="+url.QueryEscape(bad), e.master, nil)
				require.Equal(t, http.StatusBadRequest, res.Status, "%q: %s", bad, res.Body)
				require.Equal(t, "topic", res.object(t)["field"], "%q: %s", bad, res.Body)
			}

			// What the 409 on delete counts is what the listing finds: gone,
			// the topic can go.
			res := e.do("DELETE", "/topics/digest.weekly", e.master, nil)
			require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
			require.Contains(t, string(res.Body), "1 event targets it")
			found, _ := list(e.master, "topic=digest.weekly")
			for _, id := range found {
				require.Equal(t, http.StatusNoContent, e.do("DELETE", "/events/"+id, e.master, nil).Status)
			}
			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/topics/digest.weekly", e.master, nil).Status)
			got, _ = list(e.master, "topic=digest.weekly")
			require.Empty(t, got, "deleted events are not listed")
		})
	}
}
