package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/qhronos/qhronos/client"
)

// The event page's schedule controls: pause until a time with a reason,
// resume with a catch-up choice, skip or move one planned instant, remove
// an exception, and backfill a past range. Each is one SDK call; an API
// refusal comes back on the event page next to the field it names.

// pickerLayouts are the values a datetime-local input sends (with and
// without seconds), and the same typed with a space.
var pickerLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"}

// parsePicker reads a date-time picker's value as a wall-clock time in the
// event's zone.
func parsePicker(v string, loc *time.Location) (time.Time, bool) {
	for _, l := range pickerLayouts {
		if t, err := time.ParseInLocation(l, v, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// resolveInstant reads an instant as the API and the CLI do: a date-time
// picker's value, RFC 3339, or words ("in 2 hours", "tomorrow 9:00") in the
// event's zone. Words are resolved by the API itself, as the start of a
// one-time schedule's preview, so the console accepts exactly its forms.
func (c *Console) resolveInstant(r *http.Request, text, zone string) (time.Time, error) {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc = time.UTC
	}
	if t, ok := parsePicker(text, loc); ok {
		return t, nil
	}
	p, err := c.sdk(r).Schedules.PreviewFields(r.Context(), map[string]any{"start_time": text, "timezone": zone, "count": 1})
	if err = sdkError(err); err != nil {
		return time.Time{}, err
	}
	if len(p.Instants) == 0 {
		return time.Time{}, &apiError{Status: http.StatusBadRequest, Field: "start_time", Message: "must be a future date and time"}
	}
	return p.Instants[0].Utc, nil
}

// instantError is the message for the user when resolveInstant refused
// what they typed (false for any other failure).
func instantError(err error) (string, bool) {
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status < 400 || ae.Status > 499 || ae.Status == http.StatusUnauthorized {
		return "", false
	}
	return fieldMessage(ae), true
}

// resolveTime answers the pause field's preview: the instant the typed
// text means, in the event's zone, before the form is sent.
func (c *Console) resolveTime(w http.ResponseWriter, r *http.Request, s *session) {
	zone := r.PostFormValue("timezone")
	out := map[string]string{}
	status := http.StatusOK
	t, err := c.resolveInstant(r, strings.TrimSpace(r.PostFormValue("text")), zone)
	switch msg, refused := instantError(err); {
	case err == nil:
		out["utc"], out["shown"] = t.UTC().Format(time.RFC3339Nano), inZone(t, zone)
	case refused:
		status, out["error"] = http.StatusBadRequest, msg
	case errors.Is(err, errSignedOut):
		status, out["error"] = http.StatusUnauthorized, "signed out"
	default:
		status, out["error"] = http.StatusBadGateway, "could not read the time"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}

// controlDone redirects back to the event after a control succeeded, or
// shows the page with the API's refusal next to field (the form control
// the error belongs to, unless the API named another).
func (c *Console) controlDone(w http.ResponseWriter, r *http.Request, s *session, err error, field string, typed map[string]string, done string) {
	c.controlAnswer(w, r, s, err, controlField, field, typed, done)
}

// controlAnswer is controlDone for a form whose API fields map to its
// controls through fields ("" for a field it has no control for).
func (c *Console) controlAnswer(w http.ResponseWriter, r *http.Request, s *session, err error, fields func(string) string,
	field string, typed map[string]string, done string) {
	id := r.PathValue("id")
	if err = sdkError(err); err == nil {
		redirect(w, r, Prefix+"/events/"+url.PathEscape(id), done)
		return
	}
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status == http.StatusNotFound || ae.Status >= 500 {
		c.fail(w, r, s, err)
		return
	}
	if f := fields(ae.Field); f != "" {
		field = f
	}
	c.showEvent(w, r, s, map[string]string{field: fieldMessage(ae)}, typed, http.StatusBadRequest)
}

// controlField maps an API field of a control request to the page's
// control that shows its error.
func controlField(apiField string) string {
	switch apiField {
	case "until":
		return "pause_until"
	case "reason":
		return ""
	case "at":
		return "ex_at"
	case "to":
		return "ex_to"
	case "catch_up":
		return "catch_up"
	}
	return ""
}

func (c *Console) pauseEvent(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	typed := map[string]string{"pause_until": strings.TrimSpace(r.PostFormValue("until")),
		"pause_reason": strings.TrimSpace(r.PostFormValue("reason")), "pause_catch_up": r.PostFormValue("catch_up")}
	api := c.sdk(r)
	ev, err := api.Events.Get(r.Context(), id)
	if err != nil {
		c.fail(w, r, s, sdkError(err))
		return
	}
	var until time.Time
	if v := typed["pause_until"]; v != "" {
		if until, err = c.resolveInstant(r, v, viewEvent(ev).Timezone); err != nil {
			if msg, ok := instantError(err); ok {
				c.showEvent(w, r, s, map[string]string{"pause_until": msg}, typed, http.StatusBadRequest)
				return
			}
			c.fail(w, r, s, err)
			return
		}
	}
	done := "Event paused."
	if !until.IsZero() {
		done = "Event paused until " + inZone(until, viewEvent(ev).Timezone) + "."
		until = until.UTC()
	}
	_, err = api.Events.PauseUntil(r.Context(), id, until, typed["pause_reason"], typed["pause_catch_up"])
	c.controlDone(w, r, s, err, "pause_until", typed, done)
}

func (c *Console) resumeEvent(w http.ResponseWriter, r *http.Request, s *session) {
	catchUp := r.PostFormValue("catch_up")
	if catchUp == "" {
		catchUp = "skip"
	}
	_, err := c.sdk(r).Events.ResumeWith(r.Context(), r.PathValue("id"), catchUp)
	c.controlDone(w, r, s, err, "catch_up", map[string]string{"catch_up": catchUp}, "Event resumed.")
}

// addException skips or moves one planned instant: at is the instant as
// planned (RFC 3339, from the page's list), to the picker's value in the
// event's zone.
func (c *Console) addException(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	typed := map[string]string{"ex_at": r.PostFormValue("at"), "ex_action": r.PostFormValue("action"),
		"ex_to": strings.TrimSpace(r.PostFormValue("to")), "ex_reason": strings.TrimSpace(r.PostFormValue("reason"))}
	api := c.sdk(r)
	ev, err := api.Events.Get(r.Context(), id)
	if err != nil {
		c.fail(w, r, s, sdkError(err))
		return
	}
	at, err := time.Parse(time.RFC3339Nano, typed["ex_at"])
	if err != nil {
		c.showEvent(w, r, s, map[string]string{"ex_at": "choose one of the upcoming instants"}, typed, http.StatusBadRequest)
		return
	}
	ex := client.Exception{At: at, Action: client.ExceptionAction(typed["ex_action"])}
	if typed["ex_reason"] != "" {
		ex.Reason = client.Ptr(typed["ex_reason"])
	}
	done := "Skipped: that instant will not fire."
	switch typed["ex_action"] {
	case "skip":
	case "move":
		to, ok := parsePicker(typed["ex_to"], viewEvent(ev).Location())
		if !ok {
			c.showEvent(w, r, s, map[string]string{"ex_to": "must be a date and time"}, typed, http.StatusBadRequest)
			return
		}
		done = "Moved: it fires at " + to.Format(timeLayout) + "."
		ex.To = client.Ptr(to.UTC())
	default:
		c.showEvent(w, r, s, map[string]string{"ex_action": "choose skip or move"}, typed, http.StatusBadRequest)
		return
	}
	_, err = api.Events.AddException(r.Context(), id, ex)
	c.controlDone(w, r, s, err, "ex_at", typed, done)
}

func (c *Console) removeException(w http.ResponseWriter, r *http.Request, s *session) {
	at, err := time.Parse(time.RFC3339Nano, r.PostFormValue("at"))
	if err != nil {
		c.renderError(w, r, s, http.StatusBadRequest, "That exception's instant is not a time.")
		return
	}
	err = c.sdk(r).Events.DeleteException(r.Context(), r.PathValue("id"), at)
	c.controlDone(w, r, s, err, "exceptions", nil, "Exception removed: the instant fires as the schedule plans it.")
}

// backfillEvent fires the event's past instants in [from, to] that have no
// occurrence yet (POST /events/{id}/backfill): From and To are date-time
// pickers read in the event's zone, and the exceptions and calendars apply
// unless the box is unticked. The notice counts what the API did; a
// refusal shows next to From or To, or atop the form (a one-time or paused
// event).
func (c *Console) backfillEvent(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	respect := r.PostFormValue("respect_exceptions") != ""
	typed := map[string]string{"bf_from": strings.TrimSpace(r.PostFormValue("from")),
		"bf_to": strings.TrimSpace(r.PostFormValue("to")), "bf_respect": "off"}
	if respect {
		typed["bf_respect"] = "on"
	}
	api := c.sdk(r)
	ev, err := api.Events.Get(r.Context(), id)
	if err != nil {
		c.fail(w, r, s, sdkError(err))
		return
	}
	loc := viewEvent(ev).Location()
	errs := map[string]string{}
	from, ok := parseInstant(typed["bf_from"], loc)
	if !ok {
		errs["bf_from"] = "must be a date and time"
	}
	to, ok := parseInstant(typed["bf_to"], loc)
	if !ok {
		errs["bf_to"] = "must be a date and time"
	}
	if len(errs) > 0 {
		c.showEvent(w, r, s, errs, typed, http.StatusBadRequest)
		return
	}
	res, err := api.Events.Backfill(r.Context(), id, client.BackfillRequest{From: from.UTC(), To: to.UTC(),
		RespectExceptions: client.Ptr(respect)})
	done := ""
	if err == nil {
		done = backfillNotice(res, loc)
	}
	c.controlAnswer(w, r, s, err, backfillField, "backfill", typed, done)
}

// parseInstant reads a date-time picker's value in loc, or RFC 3339 (what
// a browser without the picker lets one type).
func parseInstant(v string, loc *time.Location) (time.Time, bool) {
	if t, ok := parsePicker(v, loc); ok {
		return t, true
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil
}

// backfillField maps an API field of a backfill to the form's control.
func backfillField(apiField string) string {
	switch apiField {
	case "from":
		return "bf_from"
	case "to":
		return "bf_to"
	}
	return ""
}

// backfillNotice says what a backfill did: "12 created, 1 skipped, 3
// already existed", with the range in the event's zone.
func backfillNotice(res *client.BackfillResult, loc *time.Location) string {
	span := res.From.In(loc).Format(timeLayout) + " to " + res.To.In(loc).Format(timeLayout)
	if res.Instants == 0 {
		return "Backfill: the pattern has no instant from " + span + "."
	}
	return fmt.Sprintf("Backfill from %s: %d created, %d skipped, %d already existed.", span,
		res.Created, res.Skipped, res.Existing)
}
