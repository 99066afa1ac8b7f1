package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
)

// occurrenceNav is the section an occurrence page belongs to: Failures for
// the dead letter (failed or missed), Events for every other occurrence,
// which is reached from its event.
func occurrenceNav(status string) string {
	if status == "failed" || status == "missed" {
		return "failures"
	}
	return "events"
}

// search answers the header's search box: an event id or an occurrence id
// opens that page; anything else lists the events whose name contains it.
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
	http.Redirect(w, r, Prefix+"/events?"+url.Values{"q": {q}}.Encode(), http.StatusSeeOther)
}

func isNotFound(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}
