package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/client"
)

// occurrenceNav is the section an occurrence page belongs to: Failures for
// the dead letter (failed, timed out or missed), Events for every other
// occurrence, which is reached from its event.
func occurrenceNav(status string) string {
	if status == "failed" || status == "missed" || status == "timed_out" {
		return "failures"
	}
	return "events"
}

// search answers the header's search box: an event id or an occurrence id
// opens that page, as does an event's key (the name integrations upsert it
// by: PUT /events/by-key/{key}) when one event carries it; anything else
// lists the events whose name contains it.
func (c *Console) search(w http.ResponseWriter, r *http.Request, s *session) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		http.Redirect(w, r, Prefix+"/events", http.StatusSeeOther)
		return
	}
	if uuid.Validate(q) == nil {
		sdk, ctx := c.sdk(r), r.Context()
		_, err := sdk.Events.Get(ctx, q)
		err = sdkError(err)
		if err == nil {
			http.Redirect(w, r, Prefix+"/events/"+url.PathEscape(q), http.StatusSeeOther)
			return
		}
		if !isNotFound(err) {
			c.fail(w, r, s, err)
			return
		}
		_, err = sdk.Occurrences.Get(ctx, q)
		err = sdkError(err)
		if err == nil {
			http.Redirect(w, r, Prefix+"/occurrences/"+url.PathEscape(q), http.StatusSeeOther)
			return
		}
		if !isNotFound(err) {
			c.fail(w, r, s, err)
			return
		}
	}
	if len(q) <= maxKeyLen {
		// The same key may stand in several key scopes the token reads:
		// only a single match opens a page.
		page, err := c.sdk(r).Events.List(r.Context(), client.ListEventsParams{Key: &q, Limit: client.Ptr(2)})
		err = sdkError(err)
		var ae *apiError
		switch {
		case err == nil && len(page.Items) == 1:
			http.Redirect(w, r, Prefix+"/events/"+url.PathEscape(page.Items[0].ID), http.StatusSeeOther)
			return
		case err != nil && !(errors.As(err, &ae) && ae.Status == http.StatusBadRequest):
			c.fail(w, r, s, err)
			return
		}
	}
	http.Redirect(w, r, Prefix+"/events?"+url.Values{"q": {q}}.Encode(), http.StatusSeeOther)
}

// maxKeyLen is the longest event key the API accepts (GET /events?key=).
const maxKeyLen = 200

func isNotFound(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}
