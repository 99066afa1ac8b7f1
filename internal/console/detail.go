package console

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// occurrenceJSON is the API's occurrence resource.
type occurrenceJSON struct {
	ID           string     `json:"id"`
	EventID      string     `json:"event_id"`
	ScheduledAt  time.Time  `json:"scheduled_at"`
	Status       string     `json:"status"`
	Manual       bool       `json:"manual"`
	AttemptCount int        `json:"attempt_count"`
	NextAttempt  *time.Time `json:"next_attempt_at"`
	StatusCode   *int       `json:"status_code"`
	ResponseBody *string    `json:"response_body"`
	ErrorMessage *string    `json:"error_message"`
	StartedAt    *time.Time `json:"started_at"`
	CompletedAt  *time.Time `json:"completed_at"`
	// Reason says why a skipped, missed or cancelled occurrence did not
	// fire; OriginalScheduledAt is where a moved or rolled one was planned.
	Reason              *string    `json:"reason"`
	OriginalScheduledAt *time.Time `json:"original_scheduled_at"`
	Attempts            []attemptJSON
	EventName           string
	EventZone           string
}

type attemptJSON struct {
	Attempt         int       `json:"attempt"`
	Manual          bool      `json:"manual"`
	StartedAt       time.Time `json:"started_at"`
	DurationMS      int64     `json:"duration_ms"`
	StatusCode      *int      `json:"status_code"`
	Outcome         string    `json:"outcome"`
	Error           *string   `json:"error"`
	ResponseExcerpt *string   `json:"response_excerpt"`
	Truncated       bool      `json:"truncated"`
	LatenessMS      int64     `json:"lateness_ms"`
}

type previewJSON struct {
	Timezone string `json:"timezone"`
	Instants []struct {
		UTC      time.Time  `json:"utc"`
		Local    string     `json:"local"`
		Skipped  bool       `json:"skipped"`
		Reason   string     `json:"reason"`
		Original *time.Time `json:"original"`
	} `json:"instants"`
}

type health struct {
	Completed, Failed, Other int
	LastCode                 *int
	Text                     string
}

type eventPageData struct {
	Event     eventJSON
	Upcoming  previewJSON
	History   []occurrenceJSON
	NextQuery string
	Health    health
	Secret    string
}

// historyPage is the occurrences per page of an event's history, each with
// its attempts.
const historyPage = 10

func (c *Console) eventPage(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	ev, err := c.getEvent(r, s, id)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := eventPageData{Event: ev}
	if ev.Status == "active" || ev.Status == "paused" {
		if _, err := c.do(r, s, "GET", "/events/"+url.PathEscape(id)+"/preview", url.Values{"count": {"10"}}, nil, &d.Upcoming); err != nil {
			var ae *apiError
			if !errors.As(err, &ae) {
				c.fail(w, r, s, err)
				return
			}
		}
	}
	q := url.Values{"limit": {strconv.Itoa(historyPage)}, "to": {time.Now().UTC().Format(time.RFC3339Nano)}}
	if cur := r.URL.Query().Get("cursor"); cur != "" {
		q.Set("cursor", cur)
	}
	res, err := c.do(r, s, "GET", "/events/"+url.PathEscape(id)+"/occurrences", q, nil, &d.History)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	if next := nextCursor(res.Header); next != "" {
		d.NextQuery = url.Values{"cursor": {next}}.Encode()
	}
	for i := range d.History {
		o := &d.History[i]
		if o.AttemptCount > 0 {
			if _, err := c.do(r, s, "GET", "/occurrences/"+url.PathEscape(o.ID)+"/attempts", nil, nil, &o.Attempts); err != nil {
				c.fail(w, r, s, err)
				return
			}
		}
		switch o.Status {
		case "completed":
			d.Health.Completed++
		case "failed", "missed":
			d.Health.Failed++
		default:
			d.Health.Other++
		}
		if d.Health.LastCode == nil && o.StatusCode != nil {
			d.Health.LastCode = o.StatusCode
		}
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
	c.render(w, r, s, "event", http.StatusOK, view{Title: ev.Name, Nav: "events", Data: d})
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
	Event                  eventJSON
	Post                   string
	Cancel                 string
	Hidden                 map[string]string
}

func (c *Console) confirmEventAction(w http.ResponseWriter, r *http.Request, s *session) {
	a, ok := eventActions[r.PathValue("action")]
	if !ok {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such action.")
		return
	}
	ev, err := c.getEvent(r, s, r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	base := Prefix + "/events/" + url.PathEscape(ev.ID)
	c.render(w, r, s, "confirm", http.StatusOK, view{Title: a.Verb + " " + ev.Name, Nav: "events", Data: confirmData{
		Action: r.PathValue("action"), Verb: a.Verb, Question: a.Question, Danger: a.Danger, Event: ev,
		Post: base + "/do/" + r.PathValue("action"), Cancel: base}})
}

func (c *Console) eventAction(w http.ResponseWriter, r *http.Request, s *session) {
	action := r.PathValue("action")
	a, ok := eventActions[action]
	if !ok {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such action.")
		return
	}
	id := r.PathValue("id")
	path := "/events/" + url.PathEscape(id)
	back := Prefix + "/events/" + url.PathEscape(id)
	var err error
	switch action {
	case "delete":
		_, err = c.do(r, s, "DELETE", path, nil, nil, nil)
		back = Prefix + "/events"
	case "rotate-secret":
		var out struct {
			Secret string `json:"hmac_secret"`
		}
		if _, err = c.do(r, s, "POST", path+"/rotate-secret", nil, map[string]any{"grace": "24h"}, &out); err == nil {
			ev, gerr := c.getEvent(r, s, id)
			if gerr != nil {
				c.fail(w, r, s, gerr)
				return
			}
			c.render(w, r, s, "secret", http.StatusOK, view{Title: "New signing secret", Nav: "events",
				Data: eventPageData{Event: ev, Secret: out.Secret}})
			return
		}
	default:
		_, err = c.do(r, s, "POST", path+"/"+action, nil, map[string]any{}, nil)
	}
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status != http.StatusNotFound {
			redirect(w, r, back, a.Verb+" failed: "+ae.Message)
			return
		}
		c.fail(w, r, s, err)
		return
	}
	redirect(w, r, back, a.Done)
}

type occurrencePageData struct {
	Occurrence occurrenceJSON
	Event      *eventJSON
	// Skippable: it has not fired and its instant is ahead; Unskippable: it
	// was skipped by hand and its instant is still ahead.
	Skippable, Unskippable bool
}

func (c *Console) occurrencePage(w http.ResponseWriter, r *http.Request, s *session) {
	var d occurrencePageData
	id := url.PathEscape(r.PathValue("id"))
	if _, err := c.do(r, s, "GET", "/occurrences/"+id, nil, nil, &d.Occurrence); err != nil {
		c.fail(w, r, s, err)
		return
	}
	if _, err := c.do(r, s, "GET", "/occurrences/"+id+"/attempts", nil, nil, &d.Occurrence.Attempts); err != nil {
		c.fail(w, r, s, err)
		return
	}
	if ev, err := c.getEvent(r, s, d.Occurrence.EventID); err == nil {
		d.Event = &ev
	} else if errors.Is(err, errSignedOut) {
		c.fail(w, r, s, err)
		return
	}
	ahead := d.Occurrence.ScheduledAt.After(time.Now())
	d.Skippable = ahead && d.Occurrence.Status == "pending"
	d.Unskippable = ahead && d.Occurrence.Status == "skipped" && d.Occurrence.Reason != nil &&
		*d.Occurrence.Reason == "manual"
	c.render(w, r, s, "occurrence", http.StatusOK, view{Title: "Occurrence", Nav: occurrenceNav(d.Occurrence.Status), Data: d})
}

// controlOne skips or unskips one occurrence (action "skip" or "unskip")
// and comes back to its page.
func (c *Console) controlOne(action, done string) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		id := url.PathEscape(r.PathValue("id"))
		back := Prefix + "/occurrences/" + id
		body := map[string]any{}
		if reason := r.PostFormValue("reason"); reason != "" && action == "skip" {
			body["reason"] = reason
		}
		var out occurrenceJSON
		if _, err := c.do(r, s, "POST", "/occurrences/"+id+"/"+action, nil, body, &out); err != nil {
			var ae *apiError
			if errors.As(err, &ae) && ae.Status != http.StatusNotFound {
				redirect(w, r, back, "Could not "+action+": "+ae.Message)
				return
			}
			c.fail(w, r, s, err)
			return
		}
		redirect(w, r, back, done)
	}
}

func (c *Console) replayOne(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	back, ok := consolePath(r.PostFormValue("back"))
	if !ok {
		back = Prefix + "/occurrences/" + url.PathEscape(id)
	}
	var out occurrenceJSON
	if _, err := c.do(r, s, "POST", "/occurrences/"+url.PathEscape(id)+"/retry", nil, map[string]any{}, &out); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status != http.StatusNotFound {
			redirect(w, r, back, "Replay failed: "+ae.Message)
			return
		}
		c.fail(w, r, s, err)
		return
	}
	redirect(w, r, back, "Replay queued: the occurrence is "+out.Status+".")
}
