package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/qhronos/qhronos/client"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
)

type health struct {
	Completed, Failed, Other int
	LastCode                 *int
	Text                     string
}

type eventPageData struct {
	Event eventView
	// Tab is "" (the event) or "history" (changes beside deliveries).
	Tab        string
	Upcoming   []upcomingRow
	NoUpcoming string
	// NextRun is when the event fires next, known for a pause with an end
	// too (an older server leaves next_run_at empty while paused).
	NextRun    *time.Time
	Exceptions []client.Exception
	// Changes is one page of the event's change history, oldest first.
	Changes     []historyView
	ChangesNext string
	History     []deliveryView
	NextQuery   template.URL
	Health      health
	Secret      string
	// CSRF is the session's form token, for forms inside sub-templates.
	CSRF string
	// Errors are the control forms' field errors (pause_until, to, …) and
	// Form what was typed into them, shown again next to the error.
	Errors map[string]string
	Form   map[string]string
}

// historyPage is the occurrences per page of an event's history, each with
// its attempts.
const historyPage = 10

// changesPage is the change-history entries per page of the History tab.
const changesPage = 50

func (c *Console) eventPage(w http.ResponseWriter, r *http.Request, s *session) {
	c.showEvent(w, r, s, nil, nil, http.StatusOK)
}

// showEvent renders the event page; errs and typed are a control form's
// field errors and input after the API refused it.
func (c *Console) showEvent(w http.ResponseWriter, r *http.Request, s *session, errs, typed map[string]string, status int) {
	id := r.PathValue("id")
	ctx := r.Context()
	api := c.sdk(r)
	e, err := api.Events.Get(ctx, id)
	if err != nil {
		c.fail(w, r, s, sdkError(err))
		return
	}
	d := eventPageData{Event: viewEvent(e), Errors: errs, Form: typed, CSRF: s.CSRF}
	if d.Errors == nil {
		d.Errors = map[string]string{}
	}
	if d.Form == nil {
		d.Form = map[string]string{}
	}
	if r.URL.Query().Get("tab") == "history" {
		d.Tab = "history"
	}
	for i, cal := range d.Event.Calendars {
		if got, err := api.Calendars.Get(ctx, cal.ID); err == nil {
			d.Event.Calendars[i].Name = got.Name
		} else if errors.Is(sdkError(err), errSignedOut) {
			c.fail(w, r, s, errSignedOut)
			return
		}
	}
	if d.Tab == "" && (d.Event.Status == "active" || d.Event.Status == "paused") {
		if d.Exceptions, err = api.Events.Exceptions(ctx, id); err != nil {
			c.fail(w, r, s, sdkError(err))
			return
		}
		p, err := api.Events.Preview(ctx, id, client.PreviewEventParams{Count: client.Ptr(10)})
		var ae *apiError
		if err != nil && !errors.As(sdkError(err), &ae) {
			c.fail(w, r, s, sdkError(err))
			return
		}
		if p != nil {
			d.NoUpcoming = str(p.Reason)
		}
		d.Upcoming = upcoming(d.Event, p, d.Exceptions)
		if d.NextRun, err = api.Events.NextFiring(ctx, e); err != nil && !errors.As(sdkError(err), &ae) {
			c.fail(w, r, s, sdkError(err))
			return
		}
	}
	if d.Tab == "history" {
		hp := client.EventHistoryParams{Limit: client.Ptr(changesPage)}
		if cur := r.URL.Query().Get("changes"); cur != "" {
			hp.Cursor = &cur
		}
		page, err := api.Events.History(ctx, id, hp)
		if err != nil {
			c.fail(w, r, s, sdkError(err))
			return
		}
		d.Changes = viewHistory(page.Items)
		d.ChangesNext = page.NextCursor
	}
	if err := c.deliveries(r, api, &d); err != nil {
		c.fail(w, r, s, sdkError(err))
		return
	}
	c.render(w, r, s, "event", status, view{Title: d.Event.Name, Nav: "events", Zone: d.Event.Timezone, Data: d})
}

// deliveries reads one page of the event's fired occurrences, newest
// first, with their attempts, and sums up their health.
func (c *Console) deliveries(r *http.Request, api *client.Client, d *eventPageData) error {
	ctx := r.Context()
	q := client.ListEventOccurrencesParams{Limit: client.Ptr(historyPage), To: client.Ptr(time.Now().UTC())}
	if cur := r.URL.Query().Get("cursor"); cur != "" {
		q.Cursor = &cur
	}
	page, err := api.Events.Occurrences(ctx, d.Event.ID, q)
	if err != nil {
		return err
	}
	if page.NextCursor != "" {
		nq := url.Values{"cursor": {page.NextCursor}}
		if d.Tab != "" {
			nq.Set("tab", d.Tab)
		}
		d.NextQuery = queryURL(nq)
	}
	for _, o := range page.Items {
		dv := viewDelivery(o)
		if o.AttemptCount > 0 {
			atts, err := api.Occurrences.Attempts(ctx, o.ID)
			if err != nil {
				return err
			}
			for _, a := range atts {
				dv.Attempts = append(dv.Attempts, viewAttempt(a))
			}
		}
		switch dv.Status {
		case "completed":
			d.Health.Completed++
		case "failed", "missed", "timed_out":
			d.Health.Failed++
		default:
			d.Health.Other++
		}
		if d.Health.LastCode == nil && dv.StatusCode != nil {
			d.Health.LastCode = dv.StatusCode
		}
		d.History = append(d.History, dv)
	}
	switch n := d.Health.Completed + d.Health.Failed; {
	case n == 0:
		d.Health.Text = "no finished deliveries yet"
	case d.Health.Failed == 0:
		d.Health.Text = "healthy"
	case d.Health.Completed == 0:
		d.Health.Text = "failing"
	default:
		d.Health.Text = "degraded"
	}
	return nil
}

// eventActions are the confirmed actions on an event.
var eventActions = map[string]struct {
	Verb, Question, Done string
	Danger               bool
}{
	"pause":         {"Pause", "Pause this event? Future occurrences are cancelled until you resume it.", "Event paused.", false},
	"resume":        {"Resume", "Resume this event? Its future occurrences are scheduled again.", "Event resumed.", false},
	"trigger":       {"Trigger now", "Fire this event once now (a manual occurrence)?", "Triggered: a manual occurrence is due now.", false},
	"delete":        {"Delete", "Delete this event? It stops firing; its history stays listable.", "Event deleted.", true},
	"rotate-secret": {"Rotate secret", "Rotate the signing secret? The old one keeps signing for 24 hours; the new one is shown once.", "", true},
}

type confirmData struct {
	Action, Verb, Question string
	Danger                 bool
	// Name is the event's (or other subject's) name in the heading.
	Name   string
	Post   string
	Cancel string
	Hidden map[string]string
}

func (c *Console) confirmEventAction(w http.ResponseWriter, r *http.Request, s *session) {
	a, ok := eventActions[r.PathValue("action")]
	if !ok {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such action.")
		return
	}
	ev, err := c.sdk(r).Events.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, sdkError(err))
		return
	}
	base := Prefix + "/events/" + url.PathEscape(ev.ID)
	c.render(w, r, s, "confirm", http.StatusOK, view{Title: a.Verb + " " + ev.Name, Nav: "events", Data: confirmData{
		Action: r.PathValue("action"), Verb: a.Verb, Question: a.Question, Danger: a.Danger,
		Name: ev.Name, Post: base + "/do/" + r.PathValue("action"), Cancel: base}})
}

func (c *Console) eventAction(w http.ResponseWriter, r *http.Request, s *session) {
	action := r.PathValue("action")
	a, ok := eventActions[action]
	if !ok {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such action.")
		return
	}
	id := r.PathValue("id")
	ctx := r.Context()
	api := c.sdk(r)
	back := Prefix + "/events/" + url.PathEscape(id)
	var err error
	switch action {
	case "delete":
		err = api.Events.Delete(ctx, id)
		back = Prefix + "/events"
	case "rotate-secret":
		var rot *client.SecretRotation
		if rot, err = api.Events.RotateSecret(ctx, id, 24*time.Hour); err == nil {
			ev, gerr := api.Events.Get(ctx, id)
			if gerr != nil {
				c.fail(w, r, s, sdkError(gerr))
				return
			}
			c.render(w, r, s, "secret", http.StatusOK, view{Title: "New signing secret", Nav: "events",
				Data: eventPageData{Event: viewEvent(ev), Secret: rot.HmacSecret}})
			return
		}
	case "trigger":
		_, err = api.Events.Trigger(ctx, id)
	case "pause":
		_, err = api.Events.Pause(ctx, id)
	case "resume":
		_, err = api.Events.Resume(ctx, id)
	}
	if err = sdkError(err); err != nil {
		c.answerFailure(w, r, s, err, redirect, back, a.Verb+" failed: ")
		return
	}
	redirect(w, r, back, a.Done)
}

// occurrenceView is one occurrence as its page shows it, read from the
// SDK's client.Occurrence: optional members flattened so a template never
// prints a pointer.
type occurrenceView struct {
	ID, EventID, Status string
	ScheduledAt         time.Time
	Manual              bool
	NextAttempt         *time.Time
	StatusCode          *int
	ErrorMessage        string
	// Reason says why a skipped, missed or cancelled occurrence did not
	// fire; OriginalScheduledAt is where a moved or rolled one was planned.
	Reason              string
	OriginalScheduledAt *time.Time
	Attempts            []attemptView
	// Run is a callback event's run, once its delivery was accepted or
	// the receiver reported it; nil otherwise.
	Run *runView
}

// runView is a run as the occurrence page shows it: its deadline while it
// is running, the last heartbeat, and the receiver's report (succeeded or
// failed, its output indented, when) with the run's duration once over.
type runView struct {
	Deadline, HeartbeatAt, ReportedAt *time.Time
	Status, Output                    string
	DurationMS                        *int64
}

func viewRun(r *client.Run) *runView {
	if r == nil {
		return nil
	}
	v := &runView{Deadline: r.Deadline, HeartbeatAt: r.HeartbeatAt, ReportedAt: r.ReportedAt, DurationMS: r.DurationMs}
	if r.Status != nil {
		v.Status = string(*r.Status)
	}
	if r.Output != nil && string(*r.Output) != "null" {
		v.Output = indentJSON(*r.Output)
	}
	return v
}

// indentJSON writes a JSON document indented for people, or as it is when
// it does not parse. Numbers stay as written; strings are written as they
// read ("<" rather than the API's "\u003c"): the page escapes them.
func indentJSON(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return string(raw)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func viewOccurrence(o *client.Occurrence, attempts []client.Attempt) occurrenceView {
	v := occurrenceView{ID: o.ID, EventID: o.EventID, Status: string(o.Status), ScheduledAt: o.ScheduledAt,
		Manual: o.Manual != nil && *o.Manual, NextAttempt: o.NextAttemptAt, StatusCode: o.StatusCode,
		ErrorMessage: str(o.ErrorMessage), OriginalScheduledAt: o.OriginalScheduledAt, Run: viewRun(o.Run)}
	if o.Reason != nil {
		v.Reason = string(*o.Reason)
	}
	for _, a := range attempts {
		v.Attempts = append(v.Attempts, viewAttempt(a))
	}
	return v
}

type occurrencePageData struct {
	Occurrence occurrenceView
	Event      *eventView
	// Skippable (and movable): it has not fired and its instant is ahead; Unskippable: it
	// was skipped by hand and its instant is still ahead.
	Skippable, Unskippable bool
	// RequestsOff: requests are not recorded (outbound.record_requests).
	RequestsOff bool
	// Fanout is the deliveries of an occurrence of an event that targets a
	// topic (deliveries.go); nil otherwise.
	Fanout *fanoutView
}

func (c *Console) occurrencePage(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	api := c.sdk(r)
	occ, err := api.Occurrences.Get(ctx, r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, sdkError(err))
		return
	}
	attempts, err := api.Occurrences.Attempts(ctx, occ.ID)
	if err != nil {
		c.fail(w, r, s, sdkError(err))
		return
	}
	d := occurrencePageData{Occurrence: viewOccurrence(occ, attempts), RequestsOff: c.opts.RequestsOff}
	if d.Fanout, err = c.fanout(r, occ); err != nil {
		c.fail(w, r, s, err)
		return
	}
	// The event may be deleted or outside the token's scope: the page still
	// shows the occurrence, naming only the event's id. The portal reads no
	// events, and of an occurrence it only replays.
	if !s.inPortal() {
		if ev, err := api.Events.Get(ctx, occ.EventID); err == nil {
			v := viewEvent(ev)
			d.Event = &v
		} else if err = sdkError(err); errors.Is(err, errSignedOut) {
			c.fail(w, r, s, err)
			return
		}
	}
	ahead := d.Occurrence.ScheduledAt.After(time.Now()) && !s.inPortal()
	d.Skippable = ahead && d.Occurrence.Status == "pending"
	d.Unskippable = ahead && d.Occurrence.Status == "skipped" && d.Occurrence.Reason == "manual"
	v := view{Title: "Occurrence", Nav: occurrenceNav(d.Occurrence.Status), Data: d}
	if d.Event != nil {
		v.Zone = d.Event.Timezone
	}
	c.render(w, r, s, "occurrence", http.StatusOK, v)
}

// controlOne skips or unskips one occurrence (action "skip" or "unskip")
// and comes back to its page.
func (c *Console) controlOne(action, done string) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		id := r.PathValue("id")
		back := base(r) + "/occurrences/" + url.PathEscape(id)
		occs := c.sdk(r).Occurrences
		var err error
		if action == "skip" {
			_, err = occs.Skip(r.Context(), id, r.PostFormValue("reason"))
		} else {
			_, err = occs.Unskip(r.Context(), id)
		}
		if err = sdkError(err); err != nil {
			c.answerFailure(w, r, s, err, redirect, back, "Could not "+action+": ")
			return
		}
		redirect(w, r, back, done)
	}
}

// moveOne moves one pending occurrence to another moment (POST
// /occurrences/{id}/move), the picker read in its event's zone (UTC when
// the event is not visible), and comes back to its page.
func (c *Console) moveOne(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	back := base(r) + "/occurrences/" + url.PathEscape(id)
	api := c.sdk(r)
	occ, err := api.Occurrences.Get(r.Context(), id)
	if err != nil {
		c.fail(w, r, s, sdkError(err))
		return
	}
	loc := time.UTC
	if ev, err := api.Events.Get(r.Context(), occ.EventID); err == nil {
		loc = viewEvent(ev).Location()
	}
	to, ok := parsePicker(strings.TrimSpace(r.PostFormValue("to")), loc)
	if !ok {
		redirect(w, r, back, "Could not move: to must be a date and time")
		return
	}
	_, err = api.Occurrences.Move(r.Context(), id, to.UTC(), strings.TrimSpace(r.PostFormValue("reason")))
	if err = sdkError(err); err != nil {
		c.answerFailure(w, r, s, err, redirect, back, "Could not move: ")
		return
	}
	redirect(w, r, back, "Moved: it fires at "+to.Format(timeLayout)+".")
}

func (c *Console) replayOne(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	back, ok := pathUnder(base(r), r.PostFormValue("back"))
	if !ok {
		back = base(r) + "/occurrences/" + url.PathEscape(id)
	}
	if sub := strings.TrimSpace(r.PostFormValue("subscription")); sub != "" {
		c.replayDelivery(w, r, s, id, sub, back)
		return
	}
	out, err := c.sdk(r).Occurrences.Replay(r.Context(), id)
	if err = sdkError(err); err != nil {
		c.answerFailure(w, r, s, err, redirect, back, "Replay failed: ")
		return
	}
	if out.Fanout != nil {
		redirect(w, r, back, "Replay queued: its failed deliveries are sent again; the occurrence is "+string(out.Status)+".")
		return
	}
	redirect(w, r, back, "Replay queued: the occurrence is "+string(out.Status)+".")
}
