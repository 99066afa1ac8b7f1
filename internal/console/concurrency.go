package console

import (
	"net/http"
	"net/url"
	"time"

	"github.com/qhronos/qhronos/client"
)

// The Concurrency pages: the concurrency keys the events of the token name,
// each with its limit, its occurrences in flight and waiting, and whether
// it is paused; a key's page pauses and resumes it. The counts are the
// API's at the moment of the request (reload for the current ones).

// keyView is a concurrency key as the pages show it.
type keyView struct {
	Key                      string
	Limit, InFlight, Waiting int
	Paused                   bool
	PausedAt                 *time.Time
	PausedBy                 string
}

func viewKey(k *client.ConcurrencyKey) keyView {
	return keyView{Key: k.Key, Limit: k.Limit, InFlight: k.InFlight, Waiting: k.Waiting, Paused: k.Paused,
		PausedAt: k.PausedAt, PausedBy: str(k.PausedBy)}
}

type concurrencyData struct {
	Rows  []keyView
	First bool
	// Next is the API's cursor of the next page, "" on the last. It goes
	// into the link as a value (cursor={{.Next}}) for the template to
	// escape: an encoded query string would have its "=" escaped too.
	Next string
}

func (c *Console) concurrencyPage(w http.ResponseWriter, r *http.Request, s *session) {
	p := client.ListConcurrencyKeysParams{Limit: client.Ptr(pageSize)}
	cur := r.URL.Query().Get("cursor")
	if cur != "" {
		p.Cursor = &cur
	}
	pg, err := c.sdk(r).ConcurrencyKeys.List(r.Context(), p)
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := concurrencyData{First: cur == "", Next: pg.NextCursor}
	for i := range pg.Items {
		d.Rows = append(d.Rows, viewKey(&pg.Items[i]))
	}
	c.render(w, r, s, "concurrency", http.StatusOK, view{Title: "Concurrency", Nav: "concurrency", Data: d})
}

func (c *Console) concurrencyKeyPage(w http.ResponseWriter, r *http.Request, s *session) {
	k, err := c.sdk(r).ConcurrencyKeys.Get(r.Context(), r.PathValue("key"))
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, "concurrency_key", http.StatusOK, view{Title: "Concurrency key " + k.Key, Nav: "concurrency",
		Data: viewKey(k)})
}

// pauseKey pauses (or resumes) the key and comes back to its page; the
// API's refusal (403 for a token that may not change every event naming
// the key) is shown there, a 404 is the error page.
func (c *Console) pauseKey(paused bool) handler {
	done := "Resumed: its waiting occurrences take the free slots, oldest first."
	if paused {
		done = "Paused: none of its occurrences takes a slot until it is resumed; the runs in flight go on."
	}
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		key := r.PathValue("key")
		keys := c.sdk(r).ConcurrencyKeys
		set := keys.Resume
		if paused {
			set = keys.Pause
		}
		back := Prefix + "/concurrency/" + url.PathEscape(key)
		if _, err := set(r.Context(), key); err != nil {
			c.answerFailure(w, r, s, sdkError(err), redirectProblem, back, "Refused: ")
			return
		}
		redirect(w, r, back, done)
	}
}
