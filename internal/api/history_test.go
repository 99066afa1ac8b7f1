package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/redact"
	"github.com/qhronos/qhronos/internal/repository"
)

// historyPage is the answer of GET /events/{id}/history.
type historyPage struct {
	Data []struct {
		ID      string                            `json:"id"`
		At      time.Time                         `json:"at"`
		Subject string                            `json:"subject"`
		Channel string                            `json:"channel"`
		Action  string                            `json:"action"`
		Reason  string                            `json:"reason"`
		Changes map[string]struct{ From, To any } `json:"changes"`
	} `json:"data"`
	Pagination struct {
		Limit      int    `json:"limit"`
		NextCursor string `json:"next_cursor"`
	} `json:"pagination"`
}

func (p historyPage) actions() []string {
	out := []string{}
	for _, e := range p.Data {
		out = append(out, e.Action)
	}
	return out
}

// history reads an event's whole history as token, following next_cursor
// with pages of limit entries; query is added to every request.
func (e *env) history(token, id string, limit int, query string) historyPage {
	e.t.Helper()
	var all historyPage
	cursor := ""
	for range 50 {
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		res := e.do("GET", "/events/"+id+"/history?"+q.Encode()+query, token, nil)
		require.Equal(e.t, http.StatusOK, res.Status, "history: %s", res.Body)
		var page historyPage
		res.json(e.t, &page)
		require.LessOrEqual(e.t, len(page.Data), limit)
		all.Data = append(all.Data, page.Data...)
		if page.Pagination.NextCursor == "" {
			require.Empty(e.t, res.Header.Get("Link"), "no next link on the last page")
			return all
		}
		require.Len(e.t, page.Data, limit, "a page with a next cursor is full")
		require.Contains(e.t, res.Header.Get("Link"), `rel="next"`)
		cursor = page.Pagination.NextCursor
	}
	e.t.Fatal("history paging did not end")
	return all
}

// Every change through the API shows in the event's history, oldest first,
// by the master token over the api channel; secrets only as fingerprints.
func TestEventHistoryRecordsEveryChange(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			const firstSecret, secondSecret = "first-secret-f00d-0123456789", "second-secret-beef-0123456789"
			body := eventBody("hist")
			body["rrule"], body["hmac_secret"] = "FREQ=DAILY", firstSecret
			id := e.createEvent(e.master, body)["id"].(string)

			res := e.do("PUT", "/events/"+id, e.master, map[string]any{"name": "renamed",
				"retry": map[string]any{"max_attempts": 3}, "hmac_secret": secondSecret})
			require.Equal(t, http.StatusOK, res.Status, "update: %s", res.Body)
			for _, step := range []struct {
				path string
				body any
				want int
			}{
				{"/pause", nil, http.StatusOK},
				{"/resume", nil, http.StatusOK},
				{"/trigger", nil, http.StatusCreated},
				{"/rotate-secret", map[string]any{"grace": "1h"}, http.StatusOK},
			} {
				res = e.do("POST", "/events/"+id+step.path, e.master, step.body)
				require.Equal(t, step.want, res.Status, "%s: %s", step.path, res.Body)
			}
			rotated := res.object(t)["hmac_secret"].(string)
			require.NotEmpty(t, rotated)
			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/events/"+id, e.master, nil).Status)

			res = e.do("GET", "/events/"+id+"/history", e.master, nil)
			require.Equal(t, http.StatusNotFound, res.Status, "a deleted event's history needs include_deleted")
			res = e.do("GET", "/events/"+id+"/history?include_deleted=true", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			for _, secret := range []string{firstSecret, secondSecret, rotated} {
				require.NotContains(t, string(res.Body), secret, "a secret leaked into the history")
			}
			var h historyPage
			res.json(t, &h)
			require.Equal(t, []string{"create", "update", "pause", "resume", "trigger", "rotate_secret", "delete"},
				h.actions())
			for i, entry := range h.Data {
				require.Equal(t, auth.MasterSubject, entry.Subject, "entry %d", i)
				require.Equal(t, "api", entry.Channel, "entry %d", i)
				if i > 0 {
					require.False(t, entry.At.Before(h.Data[i-1].At), "oldest first")
				}
			}
			create, update, pause := h.Data[0].Changes, h.Data[1].Changes, h.Data[2].Changes
			require.Equal(t, "report", create["name"].To)
			require.Nil(t, create["name"].From)
			require.True(t, redact.IsFingerprint(create["hmac_secret"].To.(string)), "%v", create["hmac_secret"])
			require.Equal(t, struct{ From, To any }{"report", "renamed"}, update["name"])
			require.Equal(t, struct{ From, To any }{nil, map[string]any{"max_attempts": float64(3)}}, update["retry"])
			isChangedFingerprint(t, update["hmac_secret"])
			require.Len(t, update, 3, "only what changed: %v", update)
			require.Equal(t, struct{ From, To any }{"active", "paused"}, pause["status"])
			require.Equal(t, struct{ From, To any }{"paused", "active"}, h.Data[3].Changes["status"])
			triggered := h.Data[4].Changes["occurrence"].To.(map[string]any)
			require.Equal(t, true, triggered["manual"])
			isChangedFingerprint(t, h.Data[5].Changes["hmac_secret"])
			require.Equal(t, struct{ From, To any }{"active", "deleted"}, h.Data[6].Changes["status"])

			// Paged three at a time, the history reads the same.
			paged := e.history(e.master, id, 3, "&include_deleted=true")
			require.Equal(t, h.actions(), paged.actions())
			require.Equal(t, h.Data[6].ID, paged.Data[6].ID)

			res = e.do("GET", "/events/"+id+"/history?include_deleted=true&cursor=bm90LWEtY3Vyc29y", e.master, nil)
			require.Equal(t, http.StatusBadRequest, res.Status, "a forged cursor is refused: %s", res.Body)
		})
	}
}

// The channel comes from X-Qhronos-Via, the subject from the principal; a
// principal that cannot read the event gets 404.
func TestEventHistoryNamesWhoAndThroughWhat(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			writer := e.mint("write", []string{"tenant-a"})
			reader := e.mint("read", []string{"tenant-a"})
			stranger := e.mint("read", []string{"tenant-b"})

			res := e.do("POST", "/events", writer, eventBody("tenant-a"), "X-Qhronos-Via", "console")
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			id := res.object(t)["id"].(string)
			res = e.do("PUT", "/events/"+id, writer, map[string]any{"description": "via the cli"},
				"X-Qhronos-Via", "cli")
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			res = e.do("POST", "/events/"+id+"/pause", e.master, nil, "X-Qhronos-Via", "Not A Channel!")
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)

			h := e.history(reader, id, 50, "")
			require.Equal(t, []string{"create", "update", "pause"}, h.actions())
			who := [][2]string{}
			for _, entry := range h.Data {
				who = append(who, [2]string{entry.Subject, entry.Channel})
			}
			require.Equal(t, [][2]string{{"user-write", "console"}, {"user-write", "cli"}, {auth.MasterSubject, "api"}},
				who, "subject and channel of each change (a malformed channel is api)")
			require.Equal(t, struct{ From, To any }{"", "via the cli"}, h.Data[1].Changes["description"])

			for _, path := range []string{"/events/" + id + "/history",
				"/events/" + id + "/history?include_deleted=true"} {
				res = e.do("GET", path, stranger, nil)
				require.Equal(t, http.StatusNotFound, res.Status, "another tenant: %s", res.Body)
			}
			for _, unknown := range []string{"0b7f6a43-2a35-4d43-9a47-51cbbd1d6d83", "not-a-uuid"} {
				res = e.do("GET", "/events/"+unknown+"/history?include_deleted=true", e.master, nil)
				require.Equal(t, http.StatusNotFound, res.Status, "%s: %s", unknown, res.Body)
			}
		})
	}
}

// An archived event's history went to the archive with it and stays
// readable with include_deleted, scoped by the archived event's tags.
func TestEventHistoryOfArchivedEvent(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			reader := e.mint("read", []string{"archived-tenant"})
			stranger := e.mint("read", []string{"someone-else"})
			id := e.createEvent(e.master, eventBody("archived-tenant"))["id"].(string)
			res := e.do("PUT", "/events/"+id, e.master, map[string]any{"name": "last name"})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/events/"+id, e.master, nil).Status)
			before := e.history(reader, id, 2, "&include_deleted=true")
			require.Equal(t, []string{"create", "update", "delete"}, before.actions())

			// The archiver's steps, run as if retention had passed.
			ctx := context.Background()
			later := time.Now().Add(40 * 24 * time.Hour)
			batch := repository.ArchiveBatch{Cutoff: later, Now: later, Limit: 100}
			_, err := e.store.ArchiveOccurrences(ctx, batch)
			require.NoError(t, err)
			moved, err := e.store.ArchiveEvents(ctx, batch)
			require.NoError(t, err)
			require.Equal(t, 1, moved.Events, "the deleted event was archived")
			_, err = e.store.GetEventAny(ctx, id)
			require.Error(t, err, "the event left the live table")

			after := e.history(reader, id, 2, "&include_deleted=true")
			require.Equal(t, before, after, "archived history reads as it did")
			res = e.do("GET", "/events/"+id+"/history", reader, nil)
			require.Equal(t, http.StatusNotFound, res.Status, "without include_deleted: %s", res.Body)
			res = e.do("GET", "/events/"+id+"/history?include_deleted=true", stranger, nil)
			require.Equal(t, http.StatusNotFound, res.Status, "another tenant: %s", res.Body)
		})
	}
}

// Schedule control shows in the history with its reasons: a pause with a
// reason, skip, unskip and move of one occurrence, an exception added and
// removed.
func TestEventHistoryRecordsScheduleControl(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
			body := eventBody("control")
			body["start_time"], body["rrule"] = start.Format(time.RFC3339), "FREQ=DAILY"
			id := e.createEvent(e.master, body)["id"].(string)

			res := e.do("GET", "/events/"+id+"/occurrences?order=scheduled_at", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var occs []map[string]any
			res.json(t, &occs)
			require.NotEmpty(t, occs)
			occ := occs[0]["id"].(string)
			moveTo := start.Add(30 * time.Minute).Format(time.RFC3339)
			exceptionAt := start.Add(48 * time.Hour).Format(time.RFC3339)
			for _, step := range []struct {
				method, path string
				body         any
				want         int
			}{
				{"POST", "/occurrences/" + occ + "/skip", map[string]any{"reason": "public holiday"}, http.StatusOK},
				{"POST", "/occurrences/" + occ + "/unskip", nil, http.StatusOK},
				{"POST", "/occurrences/" + occ + "/move", map[string]any{"to": moveTo, "reason": "later"}, http.StatusOK},
				{"POST", "/events/" + id + "/exceptions", map[string]any{"at": exceptionAt, "action": "skip",
					"reason": "Christmas"}, http.StatusCreated},
				{"DELETE", "/events/" + id + "/exceptions/" + exceptionAt, nil, http.StatusNoContent},
				{"POST", "/events/" + id + "/pause", map[string]any{"reason": "office closed"}, http.StatusOK},
				{"POST", "/events/" + id + "/resume", nil, http.StatusOK},
			} {
				res = e.do(step.method, step.path, e.master, step.body)
				require.Equal(t, step.want, res.Status, "%s %s: %s", step.method, step.path, res.Body)
			}

			h := e.history(e.master, id, 50, "")
			require.Equal(t, []string{"create", "skip", "unskip", "move", "exception_added", "exception_removed",
				"pause", "resume"}, h.actions())
			reasons := []string{}
			for _, entry := range h.Data {
				reasons = append(reasons, entry.Reason)
			}
			require.Equal(t, []string{"", "public holiday", "", "later", "Christmas", "", "office closed", ""}, reasons)
			skip := h.Data[1].Changes["occurrence"]
			require.Equal(t, "pending", skip.From.(map[string]any)["status"])
			require.Equal(t, "skipped", skip.To.(map[string]any)["status"])
			moved := h.Data[3].Changes["occurrence"].To.(map[string]any)
			require.Equal(t, occ, moved["id"])
			require.Equal(t, moveTo, moved["scheduled_at"])
			require.Equal(t, start.Format(time.RFC3339), moved["original_scheduled_at"])
			added := h.Data[4].Changes["exception"]
			require.Nil(t, added.From)
			require.Equal(t, map[string]any{"at": exceptionAt, "action": "skip", "reason": "Christmas"}, added.To)
			require.Equal(t, added.To, h.Data[5].Changes["exception"].From)
			require.Nil(t, h.Data[5].Changes["exception"].To)
			require.Equal(t, struct{ From, To any }{"active", "paused"}, h.Data[6].Changes["status"])
		})
	}
}

// isChangedFingerprint checks a secret's change shows as two different
// fingerprints and nothing else.
func isChangedFingerprint(t *testing.T, c struct{ From, To any }) {
	t.Helper()
	from, _ := c.From.(string)
	to, _ := c.To.(string)
	require.True(t, redact.IsFingerprint(from) && redact.IsFingerprint(to), "%v", c)
	require.NotEqual(t, from, to)
}
