package console

import (
	"encoding/json"
	"errors"
	"github.com/qhronos/qhronos/client"
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
	var raw struct {
		Params map[string]any `json:"params"`
	}
	if json.Unmarshal(e.Action, &raw) == nil {
		if text, ok := brokerTarget(a.Type, raw.Params); ok {
			return text
		}
	}
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
		if a.Params.URL == "" && raw.Params != nil {
			if id, _ := raw.Params["endpoint_id"].(string); id != "" {
				return "endpoint " + id
			}
		}
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
	Events             []eventView
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
	p := client.ListEventsParams{Limit: client.Ptr(pageSize)}
	if d.Q != "" {
		p.Q = &d.Q
	}
	if d.Tags != "" {
		p.Tags = []string{d.Tags}
	}
	if d.Status != "" {
		p.Status = &d.Status
	}
	if cur := in.Get("cursor"); cur != "" {
		p.Cursor = &cur
	}
	d.Filtered = d.Q != "" || d.Tags != "" || d.Status != ""
	page, err := c.sdk(r).Events.List(r.Context(), p)
	err = sdkError(err)
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
	for i := range page.Items {
		d.Events = append(d.Events, viewEvent(&page.Items[i]))
	}
	if page.NextCursor != "" {
		nq := url.Values{"cursor": {page.NextCursor}}
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
	// TargetKind is "url" (Target is a URL or a WebSocket client name) or
	// "endpoint" (EndpointID names one of Endpoints).
	TargetKind  string
	Target      string
	EndpointID  string
	Method      string
	Secret      string
	Metadata    string
	CatchUp     string
	Timeout     string
	MaxAttempts string
	Status      string
	DSTGap      string
	DSTRepeat   string
	Jitter      string
	// Calendars are the calendars the token can read, each with the policy
	// chosen for this event ("" when not used), the event's own first.
	Calendars []calendarChoice
	Endpoints []endpointChoice
	// Listed tells whether the endpoint and calendar lists could be read
	// (a token without read access to them gets the plain form).
	Errors  map[string]string
	General string
}

type calendarChoice struct {
	ID, Name, Policy string
}

type endpointChoice struct {
	ID, Name, URL, State string
}

func formFromRequest(r *http.Request) eventForm {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	f := eventForm{Name: v("name"), Description: v("description"), Tags: v("tags"), Timezone: v("timezone"),
		StartTime: v("start_time"), RuleKind: v("rule_kind"), OrigKind: v("orig_kind"), Rule: v("rule"),
		ActionType: v("action_type"), TargetKind: v("target_kind"), Target: v("target"), EndpointID: v("endpoint_id"),
		Method: v("method"), Secret: r.PostFormValue("hmac_secret"),
		Metadata: v("metadata"), CatchUp: v("catch_up"), Timeout: v("timeout"), MaxAttempts: v("max_attempts"),
		Status: v("status"), DSTGap: v("dst_gap"), DSTRepeat: v("dst_repeat"), Jitter: v("jitter"),
		Errors: map[string]string{}}
	// calendar_id and calendar_policy come in pairs, in the page's order.
	ids, policies := r.PostForm["calendar_id"], r.PostForm["calendar_policy"]
	for i, id := range ids {
		if i < len(policies) {
			f.Calendars = append(f.Calendars, calendarChoice{ID: id, Policy: policies[i]})
		}
	}
	return f
}

func formFromEvent(e eventView) eventForm {
	f := eventForm{ID: e.ID, Editing: true, Name: e.Name, Description: e.Description, Tags: strings.Join(e.Tags, ", "),
		Timezone: e.Timezone, RuleKind: e.RuleKind(), OrigKind: e.RuleKind(), Rule: e.RuleText(),
		ActionType: e.ActionType(), CatchUp: e.CatchUp, Status: e.Status, DSTGap: e.DSTGap, DSTRepeat: e.DSTRepeat,
		Jitter: e.Jitter, Timeout: e.Timeout, Metadata: e.Metadata, Errors: map[string]string{}}
	f.StartTime = e.StartTime.In(e.Location()).Format(time.RFC3339)
	f.Method = e.param("method")
	switch {
	case e.EndpointID != "":
		f.TargetKind, f.EndpointID = "endpoint", e.EndpointID
	case e.Action.Type == "websocket":
		f.TargetKind, f.Target = "url", e.param("client_name")
	default:
		f.TargetKind, f.Target = "url", e.param("url")
	}
	if e.MaxAttempts != nil {
		f.MaxAttempts = strconv.Itoa(*e.MaxAttempts)
	}
	for _, cal := range e.Calendars {
		f.Calendars = append(f.Calendars, calendarChoice{ID: cal.ID, Policy: cal.Policy})
	}
	return f
}

// formField maps an API field name to the form control that shows its
// error.
func formField(apiField string) string {
	head, _, _ := strings.Cut(apiField, ".")
	if i := strings.IndexByte(head, '['); i >= 0 {
		head = head[:i]
	}
	switch head {
	case "rrule", "cron", "schedule", "rule":
		return "rule"
	case "action", "webhook":
		switch apiField {
		case "action.type":
			return "action_type"
		case "action.params.endpoint_id":
			return "endpoint_id"
		}
		return "target"
	case "endpoint_id":
		return "endpoint_id"
	case "hmac_secret":
		return "hmac_secret"
	case "retry":
		return "max_attempts"
	case "dst":
		if apiField == "dst.repeat" {
			return "dst_repeat"
		}
		return "dst_gap"
	case "calendars":
		return "calendars"
	case "name", "description", "tags", "timezone", "start_time", "metadata", "catch_up", "timeout", "status", "jitter":
		return head
	}
	return ""
}

// scheduleBody adds the schedule members of f to body: what the preview
// needs as well as the event (rule, zone, start, DST policy, jitter and
// calendars). On edit a kind that was set before and is not chosen now is
// cleared with null, and so are an emptied jitter and calendar list.
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
	dst := map[string]any{}
	if f.DSTGap != "" {
		dst["gap"] = f.DSTGap
	}
	if f.DSTRepeat != "" {
		dst["repeat"] = f.DSTRepeat
	}
	if len(dst) > 0 || f.Editing {
		body["dst"] = dst
	}
	if f.Jitter != "" {
		body["jitter"] = f.Jitter
	} else if f.Editing {
		body["jitter"] = nil
	}
	cals := []map[string]any{}
	for _, c := range f.Calendars {
		if c.Policy != "" {
			cals = append(cals, map[string]any{"id": c.ID, "policy": c.Policy})
		}
	}
	if len(cals) > 0 || f.Editing {
		body["calendars"] = cals
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
		if f.Method != "" {
			params["method"] = f.Method
		}
	default:
		f.ActionType = "webhook"
	}
	if f.ActionType != "websocket" {
		if f.TargetKind == "endpoint" {
			if f.EndpointID == "" {
				f.Errors["endpoint_id"] = "choose an endpoint"
				ok = false
			}
			params["endpoint_id"] = f.EndpointID
		} else {
			params["url"] = f.Target
		}
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

// pickerLimit bounds the endpoints and calendars the form offers.
const pickerLimit = 100

// choices fills the endpoint and calendar pickers with what the token can
// read. The event's own calendars come first, in their order (the first
// calendar that blocks a day decides), then the others by name.
func (c *Console) choices(r *http.Request, f *eventForm) error {
	api := c.sdk(r)
	ctx := r.Context()
	eps, err := api.Endpoints.List(ctx, client.ListEndpointsParams{Limit: client.Ptr(pickerLimit)})
	if err != nil && !unlisted(err) {
		return sdkError(err)
	}
	if eps != nil {
		for _, e := range eps.Items {
			f.Endpoints = append(f.Endpoints, endpointChoice{ID: e.ID, Name: e.Name, URL: e.URL, State: string(e.State)})
		}
	}
	cals, err := api.Calendars.List(ctx, client.GetCalendarsParams{Limit: client.Ptr(pickerLimit)})
	if err != nil && !unlisted(err) {
		return sdkError(err)
	}
	names := map[string]string{}
	if cals != nil {
		for _, cal := range cals.Items {
			names[cal.ID] = cal.Name
		}
	}
	chosen := map[string]bool{}
	out := make([]calendarChoice, 0, len(names)+len(f.Calendars))
	for _, ch := range f.Calendars {
		if ch.Policy == "" || chosen[ch.ID] {
			continue
		}
		chosen[ch.ID] = true
		ch.Name = names[ch.ID]
		if ch.Name == "" {
			ch.Name = ch.ID
		}
		out = append(out, ch)
	}
	if cals != nil {
		for _, cal := range cals.Items {
			if !chosen[cal.ID] {
				out = append(out, calendarChoice{ID: cal.ID, Name: cal.Name})
			}
		}
	}
	f.Calendars = out
	return nil
}

// unlisted reports an answer that leaves a picker empty rather than failing
// the form: the token may not list the resource (403), or the server has
// no such route (404).
func unlisted(err error) bool {
	return errors.Is(err, client.ErrForbidden) || errors.Is(err, client.ErrNotFound)
}

func (c *Console) renderForm(w http.ResponseWriter, r *http.Request, s *session, f eventForm, status int) {
	if err := c.choices(r, &f); err != nil {
		c.fail(w, r, s, err)
		return
	}
	if f.TargetKind == "" {
		f.TargetKind = "url"
	}
	title := "New event"
	if f.Editing {
		title = "Edit " + f.Name
	}
	c.render(w, r, s, "event_form", status, view{Title: title, Nav: "events", Data: f})
}

func (c *Console) newEventPage(w http.ResponseWriter, r *http.Request, s *session) {
	f := eventForm{Timezone: "UTC", RuleKind: "rrule", Rule: "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0",
		StartTime: "tomorrow at 9am", ActionType: "webhook", TargetKind: "url", CatchUp: "all", Status: "active",
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
	ev, err := c.sdk(r).Events.CreateFields(r.Context(), body)
	if err = sdkError(err); err != nil {
		if f.apiFailed(err) {
			c.renderForm(w, r, s, f, http.StatusBadRequest)
			return
		}
		c.fail(w, r, s, err)
		return
	}
	redirect(w, r, Prefix+"/events/"+url.PathEscape(ev.ID), "Event created.")
}

// getEvent reads an event into the API-shaped struct the failures and
// live pages use.
func (c *Console) getEvent(r *http.Request, s *session, id string) (eventJSON, error) {
	var ev eventJSON
	_, err := c.do(r, s, "GET", "/events/"+url.PathEscape(id), nil, nil, &ev)
	return ev, err
}

func (c *Console) editEventPage(w http.ResponseWriter, r *http.Request, s *session) {
	ev, err := c.sdk(r).Events.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		c.fail(w, r, s, sdkError(err))
		return
	}
	c.renderForm(w, r, s, formFromEvent(viewEvent(ev)), http.StatusOK)
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
	if _, err := c.sdk(r).Events.UpdateFields(r.Context(), id, body); err != nil {
		if err = sdkError(err); f.apiFailed(err) {
			c.renderForm(w, r, s, f, http.StatusBadRequest)
			return
		}
		c.fail(w, r, s, err)
		return
	}
	redirect(w, r, Prefix+"/events/"+url.PathEscape(id), "Event saved.")
}

// previewInstant is one instant of the form's live preview: skipped ones
// say why, moved or rolled ones where they were planned.
type previewInstant struct {
	UTC      time.Time  `json:"utc"`
	Local    string     `json:"local"`
	Skipped  bool       `json:"skipped,omitempty"`
	Reason   string     `json:"reason,omitempty"`
	Original *time.Time `json:"original,omitempty"`
}

// previewAnswer is what the form's live preview receives.
type previewAnswer struct {
	Timezone string           `json:"timezone,omitempty"`
	Instants []previewInstant `json:"instants"`
	Error    string           `json:"error,omitempty"`
	Field    string           `json:"field,omitempty"`
}

// preview answers the form's live preview through POST /schedules/preview,
// with the form's DST policy, jitter and calendars.
func (c *Console) preview(w http.ResponseWriter, r *http.Request, s *session) {
	f := formFromRequest(r)
	f.Editing = false
	body := map[string]any{"count": 10}
	out := previewAnswer{Instants: []previewInstant{}}
	status := http.StatusOK
	if f.scheduleBody(body) {
		p, err := c.sdk(r).Schedules.PreviewFields(r.Context(), body)
		err = sdkError(err)
		var ae *apiError
		switch {
		case errors.Is(err, errSignedOut):
			status, out.Error = http.StatusUnauthorized, "signed out"
		case errors.As(err, &ae):
			status, out.Error, out.Field = ae.Status, fieldMessage(ae), formField(ae.Field)
		case err != nil:
			status, out.Error = http.StatusInternalServerError, "preview failed"
		default:
			out.Timezone = p.Timezone
			for _, in := range p.Instants {
				out.Instants = append(out.Instants, previewInstant{UTC: in.Utc, Local: in.Local,
					Skipped: in.Skipped != nil && *in.Skipped, Reason: str(in.Reason), Original: in.Original})
			}
		}
	} else {
		status = http.StatusBadRequest
		for k, v := range f.Errors {
			out.Field, out.Error = k, v
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}
