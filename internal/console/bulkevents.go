package console

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/qhronos/qhronos/client"
)

// Bulk actions on the events selected in the Events list: the list's form
// asks for a confirmation page (GET, naming every event and the count), whose
// form does the work (POST), one API call per event with the user's token,
// so each event is checked against the token's scope as a single action
// would be. The result names what failed and why.

// maxBulkEvents bounds one bulk action: a few pages of the list.
const maxBulkEvents = 100

// bulkVerbs are the actions on selected events: the verb on the button and
// the past tense of the result.
var bulkVerbs = map[string]struct{ Verb, Done string }{
	"pause":  {"Pause", "Paused"},
	"resume": {"Resume", "Resumed"},
	"delete": {"Delete", "Deleted"},
	"tag":    {"Add tag to", "Tagged"},
}

// bulkRequest is what the list's form sends: the action, the tag to add
// and the selected ids, plus the list's filter to come back to.
type bulkRequest struct {
	Action, Tag string
	IDs         []string
	Back        url.Values
}

func readBulkRequest(v url.Values) (bulkRequest, map[string]string) {
	b := bulkRequest{Action: v.Get("action"), Tag: strings.TrimSpace(v.Get("tag")), Back: url.Values{}}
	for _, id := range v["id"] {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(b.IDs, id) {
			b.IDs = append(b.IDs, id)
		}
	}
	for _, k := range []string{"q", "tags", "status", "topic", "cursor"} {
		if x := v.Get(k); x != "" {
			b.Back.Set(k, x)
		}
	}
	errs := map[string]string{}
	if _, ok := bulkVerbs[b.Action]; !ok {
		errs["action"] = "choose pause, resume, delete or add tag"
	}
	switch {
	case len(b.IDs) == 0:
		errs["id"] = "select at least one event"
	case len(b.IDs) > maxBulkEvents:
		errs["id"] = "select at most " + strconv.Itoa(maxBulkEvents) + " events at once"
	}
	if b.Action == "tag" {
		switch {
		case b.Tag == "":
			errs["tag"] = "is required to add a tag"
		case len([]rune(b.Tag)) > 100:
			errs["tag"] = "must be at most 100 characters"
		case strings.ContainsFunc(b.Tag, func(r rune) bool { return r == ',' || unicode.IsControl(r) }):
			errs["tag"] = "must not contain commas or control characters"
		}
	}
	return b, errs
}

// form is the request as the confirmation form's hidden fields.
func (b bulkRequest) form() url.Values {
	v := url.Values{"action": {b.Action}, "id": b.IDs}
	if b.Action == "tag" {
		v.Set("tag", b.Tag)
	}
	for k, x := range b.Back {
		v[k] = x
	}
	return v
}

// backURL is the Events list as the user left it.
func (b bulkRequest) backURL() string {
	if len(b.Back) == 0 {
		return Prefix + "/events"
	}
	return Prefix + "/events?" + b.Back.Encode()
}

// bulkTarget is one selected event as the confirmation and the result show
// it: its name when the token can read it, else its id with the reason.
type bulkTarget struct {
	ID, Name, Problem string
}

type bulkEventsData struct {
	Verb, Done, Action, Tag string
	Targets                 []bulkTarget
	Count                   int // events the action will be tried on
	Hidden                  url.Values
	Back                    string
	// After the action: what succeeded and what failed, with why.
	Finished  bool
	Succeeded []bulkTarget
	Failed    []bulkTarget
}

// notVisible is what an event the token cannot read is called: the same
// words whether it was deleted or is outside the token's scope.
const notVisible = "not found, or not visible to your token"

// targets reads the name of every selected event.
func (c *Console) targets(r *http.Request, ids []string) ([]bulkTarget, error) {
	api := c.sdk(r)
	out := make([]bulkTarget, 0, len(ids))
	for _, id := range ids {
		ev, err := api.Events.Get(r.Context(), id)
		err = sdkError(err)
		switch {
		case err == nil:
			out = append(out, bulkTarget{ID: id, Name: ev.Name})
		case errors.Is(err, errSignedOut):
			return nil, err
		default:
			out = append(out, bulkTarget{ID: id, Problem: problem(err)})
		}
	}
	return out, nil
}

// problem is why one event's action failed, in the API's words.
func problem(err error) string {
	var ae *apiError
	if errors.As(err, &ae) {
		if ae.Status == http.StatusNotFound {
			return notVisible
		}
		return ae.Message
	}
	return "the server could not do it; its log has the details"
}

// readBulk reads the request in v and the selected events' names; false
// when it already answered (the list with the form's errors, or a failure).
func (c *Console) readBulk(w http.ResponseWriter, r *http.Request, s *session, v url.Values) (bulkRequest, bulkEventsData, bool) {
	b, errs := readBulkRequest(v)
	if len(errs) > 0 {
		c.showEvents(w, r, s, b.Back, eventsExtra{Errors: errs, Bulk: b}, http.StatusBadRequest)
		return b, bulkEventsData{}, false
	}
	targets, err := c.targets(r, b.IDs)
	if err != nil {
		c.fail(w, r, s, err)
		return b, bulkEventsData{}, false
	}
	verb := bulkVerbs[b.Action]
	return b, bulkEventsData{Verb: verb.Verb, Done: verb.Done, Action: b.Action, Tag: b.Tag, Targets: targets,
		Back: b.backURL()}, true
}

func (c *Console) confirmBulkEvents(w http.ResponseWriter, r *http.Request, s *session) {
	b, d, ok := c.readBulk(w, r, s, r.URL.Query())
	if !ok {
		return
	}
	d.Hidden = b.form()
	for _, t := range d.Targets {
		if t.Problem == "" {
			d.Count++
		}
	}
	c.render(w, r, s, "bulk_events", http.StatusOK, view{Title: d.Verb + " events", Nav: "events", Data: d})
}

func (c *Console) bulkEvents(w http.ResponseWriter, r *http.Request, s *session) {
	if err := r.ParseForm(); err != nil {
		c.renderError(w, r, s, http.StatusBadRequest, "The form could not be read.")
		return
	}
	b, d, ok := c.readBulk(w, r, s, r.PostForm)
	if !ok {
		return
	}
	d.Finished = true
	for _, t := range d.Targets {
		if t.Problem == "" {
			if err := c.bulkOne(r, b, t.ID); err != nil {
				if errors.Is(err, errSignedOut) {
					c.fail(w, r, s, err)
					return
				}
				t.Problem = problem(err)
			}
		}
		if t.Problem == "" {
			d.Succeeded = append(d.Succeeded, t)
		} else {
			d.Failed = append(d.Failed, t)
		}
	}
	notice := d.Done + " " + strconv.Itoa(len(d.Succeeded)) + " of " + strconv.Itoa(len(d.Targets)) + " events."
	if len(d.Failed) > 0 {
		notice += " " + strconv.Itoa(len(d.Failed)) + " failed: see below."
	}
	c.render(w, r, s, "bulk_events", http.StatusOK, view{Title: d.Verb + " events", Nav: "events", Data: d,
		Notice: notice})
}

// bulkOne does the action on one event, as a single action would.
func (c *Console) bulkOne(r *http.Request, b bulkRequest, id string) error {
	api, ctx := c.sdk(r), r.Context()
	var err error
	switch b.Action {
	case "pause":
		_, err = api.Events.Pause(ctx, id)
	case "resume":
		_, err = api.Events.Resume(ctx, id)
	case "delete":
		err = api.Events.Delete(ctx, id)
	case "tag":
		// Conditional on the event as read, so a change made meanwhile
		// is not overwritten with the old tags (412 reports it).
		ev, etag, gerr := api.Events.GetWithETag(ctx, id)
		if gerr != nil {
			return sdkError(gerr)
		}
		if slices.Contains(ev.Tags, b.Tag) {
			return nil
		}
		_, err = api.Events.UpdateFields(ctx, id, map[string]any{"tags": append(slices.Clone(ev.Tags), b.Tag)},
			client.IfMatch(etag))
	}
	return sdkError(err)
}
