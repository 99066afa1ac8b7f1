package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// pageSize is the rows per page of every console listing.
const pageSize = 25

// eventJSON is the API's event resource, as the console reads it.
type eventJSON struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	StartTime     time.Time       `json:"start_time"`
	Timezone      string          `json:"timezone"`
	RRule         *string         `json:"rrule"`
	Schedule      json.RawMessage `json:"schedule"`
	Cron          *string         `json:"cron"`
	Action        json.RawMessage `json:"action"`
	Webhook       string          `json:"webhook"`
	Metadata      json.RawMessage `json:"metadata"`
	Tags          []string        `json:"tags"`
	Status        string          `json:"status"`
	Retry         json.RawMessage `json:"retry"`
	CatchUp       string          `json:"catch_up"`
	Timeout       *string         `json:"timeout"`
	HMACSecretSet bool            `json:"hmac_secret_set"`
	CreatedBy     string          `json:"created_by"`
	CreatedVia    string          `json:"created_via"`
	Version       int64           `json:"version"`
	NextRunAt     *time.Time      `json:"next_run_at"`
	LastRunAt     *time.Time      `json:"last_run_at"`
	LastStatus    string          `json:"last_status"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
}

type actionJSON struct {
	Type   string `json:"type"`
	Params struct {
		URL        string `json:"url"`
		Method     string `json:"method"`
		ClientName string `json:"client_name"`
	} `json:"params"`
}

func (e eventJSON) action() actionJSON {
	var a actionJSON
	_ = json.Unmarshal(e.Action, &a)
	return a
}

// Target is where the event delivers, in words.
func (e eventJSON) Target() string {
	a := e.action()
	switch a.Type {
	case "websocket":
		return "WebSocket client " + a.Params.ClientName
	case "apicall":
		m := a.Params.Method
		if m == "" {
			m = "POST"
		}
		return m + " " + a.Params.URL
	default:
		return a.Params.URL
	}
}

// ActionType is the delivery kind.
func (e eventJSON) ActionType() string { return e.action().Type }

// RuleText is the recurrence as the API holds it.
func (e eventJSON) RuleText() string {
	switch {
	case e.RRule != nil:
		return *e.RRule
	case e.Cron != nil:
		return *e.Cron
	case len(e.Schedule) > 0 && string(e.Schedule) != "null":
		return string(e.Schedule)
	}
	return ""
}

// RuleKind is once, rrule, cron or schedule.
func (e eventJSON) RuleKind() string {
	switch {
	case e.RRule != nil:
		return "rrule"
	case e.Cron != nil:
		return "cron"
	case len(e.Schedule) > 0 && string(e.Schedule) != "null":
		return "schedule"
	}
	return "once"
}

// InWords describes the schedule for people.
func (e eventJSON) InWords() string {
	return describeRule(e.RuleKind(), e.RuleText(), e.StartTime, e.Timezone)
}

type eventsData struct {
	Events             []eventJSON
	Q, Tags, Status    string
	Next               string
	First              bool
	Filtered           bool
	NextQuery          string
	CanWrite, Searched bool
}

func (c *Console) eventsPage(w http.ResponseWriter, r *http.Request, s *session) {
	in := r.URL.Query()
	d := eventsData{Q: strings.TrimSpace(in.Get("q")), Tags: strings.TrimSpace(in.Get("tags")),
		Status: in.Get("status"), First: in.Get("cursor") == ""}
	q := url.Values{"limit": {strconv.Itoa(pageSize)}}
	for k, v := range map[string]string{"q": d.Q, "tags": d.Tags, "status": d.Status, "cursor": in.Get("cursor")} {
		if v != "" {
			q.Set(k, v)
		}
	}
	d.Filtered = d.Q != "" || d.Tags != "" || d.Status != ""
	res, err := c.do(r, s, "GET", "/events", q, nil, &d.Events)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
		c.render(w, r, s, "events", http.StatusBadRequest, view{Title: "Events", Nav: "events", Data: d,
			Error: ae.Message})
		return
	}
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	if next := nextCursor(res.Header); next != "" {
		nq := url.Values{"cursor": {next}}
		for k, v := range map[string]string{"q": d.Q, "tags": d.Tags, "status": d.Status} {
			if v != "" {
				nq.Set(k, v)
			}
		}
		d.NextQuery = nq.Encode()
	}
	c.render(w, r, s, "events", http.StatusOK, view{Title: "Events", Nav: "events", Data: d})
}

// eventForm is the create/edit form: what the user typed, and the API's
// error per field.
type eventForm struct {
	ID          string
	Editing     bool
	Name        string
	Description string
	Tags        string
	Timezone    string
	StartTime   string
	RuleKind    string
	OrigKind    string
	Rule        string
	ActionType  string
	Target      string
	Method      string
	Secret      string
	Metadata    string
	CatchUp     string
	Timeout     string
	MaxAttempts string
	Status      string
	Errors      map[string]string
	General     string
}

func formFromRequest(r *http.Request) eventForm {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	return eventForm{Name: v("name"), Description: v("description"), Tags: v("tags"), Timezone: v("timezone"),
		StartTime: v("start_time"), RuleKind: v("rule_kind"), OrigKind: v("orig_kind"), Rule: v("rule"),
		ActionType: v("action_type"), Target: v("target"), Method: v("method"), Secret: r.PostFormValue("hmac_secret"),
		Metadata: v("metadata"), CatchUp: v("catch_up"), Timeout: v("timeout"), MaxAttempts: v("max_attempts"),
		Status: v("status"), Errors: map[string]string{}}
}

func formFromEvent(e *eventJSON) eventForm {
	f := eventForm{ID: e.ID, Editing: true, Name: e.Name, Description: e.Description, Tags: strings.Join(e.Tags, ", "),
		Timezone: e.Timezone, RuleKind: e.RuleKind(), OrigKind: e.RuleKind(), Rule: e.RuleText(),
		ActionType: e.ActionType(), CatchUp: e.CatchUp, Status: e.Status, Errors: map[string]string{}}
	loc, err := time.LoadLocation(e.Timezone)
	if err != nil {
		loc = time.UTC
	}
	f.StartTime = e.StartTime.In(loc).Format(time.RFC3339)
	a := e.action()
	f.Method = a.Params.Method
	if a.Type == "websocket" {
		f.Target = a.Params.ClientName
	} else {
		f.Target = a.Params.URL
	}
	if len(e.Metadata) > 0 && string(e.Metadata) != "null" {
		f.Metadata = string(e.Metadata)
	}
	if e.Timeout != nil {
		f.Timeout = *e.Timeout
	}
	var rt struct {
		MaxAttempts *int `json:"max_attempts"`
	}
	if json.Unmarshal(e.Retry, &rt) == nil && rt.MaxAttempts != nil {
		f.MaxAttempts = strconv.Itoa(*rt.MaxAttempts)
	}
	return f
}

// formFields maps an API field name to the form control that shows its
// error.
func formField(apiField string) string {
	head, _, _ := strings.Cut(apiField, ".")
	switch head {
	case "rrule", "cron", "schedule", "rule":
		return "rule"
	case "action", "webhook":
		if apiField == "action.type" {
			return "action_type"
		}
		return "target"
	case "hmac_secret":
		return "hmac_secret"
	case "retry":
		return "max_attempts"
	case "name", "description", "tags", "timezone", "start_time", "metadata", "catch_up", "timeout", "status":
		return head
	}
	return ""
}

// scheduleBody adds the schedule members of f to body. On edit a kind that
// was set before and is not chosen now is cleared with null.
func (f *eventForm) scheduleBody(body map[string]any) bool {
	if f.Timezone != "" {
		body["timezone"] = f.Timezone
	}
	if f.StartTime != "" {
		body["start_time"] = f.StartTime
	}
	switch f.RuleKind {
	case "rrule", "cron":
		body[f.RuleKind] = f.Rule
	case "schedule":
		var obj any
		if err := json.Unmarshal([]byte(f.Rule), &obj); err != nil {
			f.Errors["rule"] = "must be a JSON object such as {\"frequency\":\"weekly\",\"by_day\":[\"MO\"]}"
			return false
		}
		body["schedule"] = obj
	case "once", "":
	default:
		f.Errors["rule_kind"] = "choose once, RRULE, cron or schedule"
		return false
	}
	if f.Editing && f.OrigKind != f.RuleKind && f.OrigKind != "once" && f.OrigKind != "" {
		if _, set := body[f.OrigKind]; !set {
			body[f.OrigKind] = nil
		}
	}
	return true
}

// body builds the API request; false when a field is already known to be
// malformed (its error is in f.Errors).
func (f *eventForm) body() (map[string]any, bool) {
	body := map[string]any{"name": f.Name, "description": f.Description}
	tags := []string{}
	for _, t := range strings.Split(f.Tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	body["tags"] = tags
	ok := f.scheduleBody(body)
	params := map[string]any{}
	switch f.ActionType {
	case "websocket":
		params["client_name"] = f.Target
	case "apicall":
		params["url"] = f.Target
		if f.Method != "" {
			params["method"] = f.Method
		}
	default:
		f.ActionType = "webhook"
		params["url"] = f.Target
	}
	body["action"] = map[string]any{"type": f.ActionType, "params": params}
	if f.Secret != "" {
		body["hmac_secret"] = f.Secret
	}
	if f.Metadata != "" {
		var md any
		if err := json.Unmarshal([]byte(f.Metadata), &md); err != nil {
			f.Errors["metadata"] = "must be valid JSON"
			ok = false
		} else {
			body["metadata"] = md
		}
	} else if f.Editing {
		body["metadata"] = nil
	}
	if f.CatchUp != "" {
		body["catch_up"] = f.CatchUp
	}
	if f.Timeout != "" {
		body["timeout"] = f.Timeout
	}
	if f.MaxAttempts != "" {
		n, err := strconv.Atoi(f.MaxAttempts)
		if err != nil {
			f.Errors["max_attempts"] = "must be a whole number"
			ok = false
		} else {
			body["retry"] = map[string]any{"max_attempts": n}
		}
	}
	if f.Status != "" && !f.Editing {
		body["status"] = f.Status
	}
	return body, ok
}

// apiFailed puts an API error next to its field; false when it is not a
// field error the form can show.
func (f *eventForm) apiFailed(err error) bool {
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status < 400 || ae.Status > 499 || ae.Status == http.StatusUnauthorized {
		return false
	}
	if field := formField(ae.Field); field != "" {
		f.Errors[field] = fieldMessage(ae)
	} else {
		f.General = ae.Message
	}
	return true
}

func (c *Console) renderForm(w http.ResponseWriter, r *http.Request, s *session, f eventForm, status int) {
	title := "New event"
	if f.Editing {
		title = "Edit " + f.Name
	}
	c.render(w, r, s, "event_form", status, view{Title: title, Nav: "events", Data: f})
}

func (c *Console) newEventPage(w http.ResponseWriter, r *http.Request, s *session) {
	f := eventForm{Timezone: "UTC", RuleKind: "rrule", Rule: "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0",
		StartTime: "tomorrow at 9am", ActionType: "webhook", CatchUp: "all", Status: "active",
		Errors: map[string]string{}}
	c.renderForm(w, r, s, f, http.StatusOK)
}

func (c *Console) createEvent(w http.ResponseWriter, r *http.Request, s *session) {
	f := formFromRequest(r)
	body, ok := f.body()
	if !ok {
		c.renderForm(w, r, s, f, http.StatusBadRequest)
		return
	}
	var ev eventJSON
	if _, err := c.do(r, s, "POST", "/events", nil, body, &ev); err != nil {
		if f.apiFailed(err) {
			c.renderForm(w, r, s, f, http.StatusBadRequest)
			return
		}
		c.fail(w, r, s, err)
		return
	}
	redirect(w, r, Prefix+"/events/"+url.PathEscape(ev.ID), "Event created.")
}

func (c *Console) getEvent(r *http.Request, s *session, id string) (eventJSON, error) {
	var ev eventJSON
	_, err := c.do(r, s, "GET", "/events/"+url.PathEscape(id), nil, nil, &ev)
	return ev, err
}

func (c *Console) editEventPage(w http.ResponseWriter, r *http.Request, s *session) {
	ev, err := c.getEvent(r, s, r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.renderForm(w, r, s, formFromEvent(&ev), http.StatusOK)
}

func (c *Console) updateEvent(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	f := formFromRequest(r)
	f.ID, f.Editing = id, true
	body, ok := f.body()
	if !ok {
		c.renderForm(w, r, s, f, http.StatusBadRequest)
		return
	}
	if _, err := c.do(r, s, "PUT", "/events/"+url.PathEscape(id), nil, body, nil); err != nil {
		if f.apiFailed(err) {
			c.renderForm(w, r, s, f, http.StatusBadRequest)
			return
		}
		c.fail(w, r, s, err)
		return
	}
	redirect(w, r, Prefix+"/events/"+url.PathEscape(id), "Event saved.")
}

// previewAnswer is what the form's live preview receives.
type previewAnswer struct {
	Timezone string `json:"timezone,omitempty"`
	Instants []struct {
		UTC   time.Time `json:"utc"`
		Local string    `json:"local"`
	} `json:"instants"`
	Error string `json:"error,omitempty"`
	Field string `json:"field,omitempty"`
}

// preview answers the form's live preview through POST /schedules/preview.
func (c *Console) preview(w http.ResponseWriter, r *http.Request, s *session) {
	f := formFromRequest(r)
	f.Editing = false
	body := map[string]any{"count": 10}
	var out previewAnswer
	status := http.StatusOK
	if f.scheduleBody(body) {
		_, err := c.do(r, s, "POST", "/schedules/preview", nil, body, &out)
		var ae *apiError
		switch {
		case errors.Is(err, errSignedOut):
			status, out.Error = http.StatusUnauthorized, "signed out"
		case errors.As(err, &ae):
			status, out.Error, out.Field = ae.Status, fieldMessage(ae), formField(ae.Field)
		case err != nil:
			status, out.Error = http.StatusInternalServerError, "preview failed"
		}
	} else {
		status = http.StatusBadRequest
		for k, v := range f.Errors {
			out.Field, out.Error = k, v
		}
	}
	if out.Instants == nil {
		out.Instants = out.Instants[:0]
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}
