package console

import (
	"encoding/json"
	"errors"
	"github.com/qhronos/qhronos/client"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// pageSize is the rows per page of every console listing.
const pageSize = 25

type eventsData struct {
	Events             []eventView
	Q, Tags, Status    string
	Topic              string // the events that target this topic (its exact name)
	Cursor             string
	Next               string
	First              bool
	Filtered           bool
	NextQuery          template.URL
	CanWrite, Searched bool
	// Errors are the bulk action form's field errors, Bulk what it sent
	// (its boxes stay ticked).
	Errors map[string]string
	Bulk   bulkRequest
}

// Selected tells whether the bulk form had the event ticked.
func (d eventsData) Selected(id string) bool { return slices.Contains(d.Bulk.IDs, id) }

// eventsExtra is what a bulk action's refusal adds to the list.
type eventsExtra struct {
	Errors map[string]string
	Bulk   bulkRequest
}

func (c *Console) eventsPage(w http.ResponseWriter, r *http.Request, s *session) {
	c.showEvents(w, r, s, r.URL.Query(), eventsExtra{}, http.StatusOK)
}

// showEvents renders the list filtered by in (q, tags, status, topic,
// cursor).
func (c *Console) showEvents(w http.ResponseWriter, r *http.Request, s *session, in url.Values, extra eventsExtra, status int) {
	d := eventsData{Q: strings.TrimSpace(in.Get("q")), Tags: strings.TrimSpace(in.Get("tags")),
		Status: in.Get("status"), Topic: strings.TrimSpace(in.Get("topic")), Cursor: in.Get("cursor"),
		First: in.Get("cursor") == "", Errors: extra.Errors, Bulk: extra.Bulk}
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
	if d.Topic != "" {
		p.Topic = &d.Topic
	}
	if d.Cursor != "" {
		p.Cursor = &d.Cursor
	}
	d.Filtered = d.Q != "" || d.Tags != "" || d.Status != "" || d.Topic != ""
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
		for k, v := range map[string]string{"q": d.Q, "tags": d.Tags, "status": d.Status, "topic": d.Topic} {
			if v != "" {
				nq.Set(k, v)
			}
		}
		d.NextQuery = queryURL(nq)
	}
	c.render(w, r, s, "events", status, view{Title: "Events", Nav: "events", Data: d})
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
	// ActionType is the delivery kind, or "topic": the event fans out to
	// the subscribers of Topic, one of Topics (the catalogue's), and sends
	// no action.
	ActionType string
	Topic      string
	Topics     []topicChoice
	// TargetKind is "url" (Target is a URL or a WebSocket client name) or
	// "endpoint" (EndpointID names one of Endpoints).
	TargetKind string
	Target     string
	EndpointID string
	Method     string
	// To is a broker action's destination inside the broker, as the CLI's
	// --to reads it: the NATS subject, the AMQP exchange:routing_key, the
	// Kafka topic or the Redis stream.
	To        string
	JetStream bool
	RecordKey string // a Kafka record key
	// EncryptTo is the receiver's public key (a JWK, JSON): every payload
	// goes out as a JWE to it. A public key, so it is shown as it is.
	EncryptTo   string
	Secret      string
	Metadata    string
	CatchUp     string
	Timeout     string
	MaxAttempts string
	Status      string
	DSTGap      string
	DSTRepeat   string
	Jitter      string
	// Completion is "response" (the receiver's 2xx completes an
	// occurrence) or "callback" (the 2xx starts a run the receiver
	// completes later, within MaxRuntime; empty: the API's default).
	Completion string
	MaxRuntime string
	// Overlap is the event's overlap policy (model.Overlaps).
	Overlap string
	// ConcurrencyKey and ConcurrencyLimit share a limit of occurrences in
	// flight with the events naming the same key (none: no key).
	ConcurrencyKey, ConcurrencyLimit string
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

type topicChoice struct {
	Name, Description string
}

func formFromRequest(r *http.Request) eventForm {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	f := eventForm{Name: v("name"), Description: v("description"), Tags: v("tags"), Timezone: v("timezone"),
		StartTime: v("start_time"), RuleKind: v("rule_kind"), OrigKind: v("orig_kind"), Rule: v("rule"),
		ActionType: v("action_type"), Topic: v("topic"), TargetKind: v("target_kind"), Target: v("target"), EndpointID: v("endpoint_id"),
		Method: v("method"), To: v("to"), JetStream: r.PostFormValue("jetstream") != "", RecordKey: v("record_key"),
		EncryptTo: v("encryption_jwk"), Secret: r.PostFormValue("hmac_secret"),
		Metadata: v("metadata"), CatchUp: v("catch_up"), Timeout: v("timeout"), MaxAttempts: v("max_attempts"),
		Status: v("status"), DSTGap: v("dst_gap"), DSTRepeat: v("dst_repeat"), Jitter: v("jitter"),
		Completion: v("completion"), MaxRuntime: v("max_runtime"), Overlap: v("overlap"),
		ConcurrencyKey: v("concurrency_key"), ConcurrencyLimit: v("concurrency_limit"), Errors: map[string]string{}}
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
		ActionType: e.ActionType(), Topic: e.Topic, CatchUp: e.CatchUp, Status: e.Status, DSTGap: e.DSTGap, DSTRepeat: e.DSTRepeat,
		Jitter: e.Jitter, Timeout: e.Timeout, Metadata: e.Metadata, Completion: e.Completion,
		MaxRuntime: e.MaxRuntime, Overlap: e.Overlap, ConcurrencyKey: e.ConcurrencyKey, Errors: map[string]string{}}
	f.StartTime = e.StartTime.In(e.Location()).Format(time.RFC3339)
	f.Method = e.param("method")
	f.To, f.JetStream, f.RecordKey = brokerTo(string(e.Action.Type), e.Action.Params)
	if jwk, ok := e.Action.Params["encryption_jwk"]; ok && jwk != nil {
		if b, err := json.Marshal(jwk); err == nil {
			f.EncryptTo = string(b)
		}
	}
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
	if e.ConcurrencyKey != "" {
		f.ConcurrencyLimit = strconv.Itoa(e.ConcurrencyLimit)
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
		case "action.params.subject", "action.params.exchange", "action.params.routing_key",
			"action.params.topic", "action.params.stream":
			return "to"
		case "action.params.key":
			return "record_key"
		}
		if strings.HasPrefix(apiField, "action.params.encryption_jwk") {
			return "encryption_jwk"
		}
		return "target"
	case "endpoint_id":
		return "endpoint_id"
	case "topic":
		return "topic"
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
	case "concurrency":
		if apiField == "concurrency.limit" {
			return "concurrency_limit"
		}
		return "concurrency_key"
	case "name", "description", "tags", "timezone", "start_time", "metadata", "catch_up", "timeout", "status", "jitter",
		"completion", "max_runtime", "overlap":
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
	if f.ActionType == "topic" {
		ok = f.topicBody(body) && ok
	} else {
		ok = f.actionBody(body) && ok
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
	f.completionBody(body)
	if !f.concurrencyBody(body) {
		ok = false
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

// actionBody adds the action the event runs to body, and its signing
// secret; false when a field is already known to be malformed.
func (f *eventForm) actionBody(body map[string]any) bool {
	ok := true
	params := map[string]any{}
	switch f.ActionType {
	case "websocket":
		params["client_name"] = f.Target
	case "apicall":
		if f.Method != "" {
			params["method"] = f.Method
		}
	case "nats", "amqp", "kafka", "redis_stream":
		if !f.brokerParams(params) {
			ok = false
		}
	default:
		f.ActionType = "webhook"
	}
	if f.EncryptTo != "" {
		if !json.Valid([]byte(f.EncryptTo)) {
			f.Errors["encryption_jwk"] = "must be a JWK: a JSON object"
			ok = false
		} else {
			params["encryption_jwk"] = json.RawMessage(f.EncryptTo)
		}
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
	return ok
}

// topicBody makes the event fan out to the chosen topic: the member topic
// instead of an action, completed by its deliveries' answers (the API
// refuses a callback for a topic). The target, encryption and signing
// fields are an action's and are left out: each subscriber's endpoint has
// its own.
func (f *eventForm) topicBody(body map[string]any) bool {
	f.Completion = "response"
	if f.Topic == "" {
		f.Errors["topic"] = "choose a topic of the catalogue"
		return false
	}
	body["topic"] = f.Topic
	return true
}

// completionBody adds how the event's occurrences complete, and its
// overlap policy, to body. Max
// runtime goes with completion by callback only, as Method goes with an
// API call only (the page disables it otherwise); on edit an emptied one
// is cleared with null (back to the default). Switching to response drops
// it on the API's side.
func (f *eventForm) completionBody(body map[string]any) {
	if f.Completion != "" {
		body["completion"] = f.Completion
	}
	if f.Overlap != "" {
		body["overlap"] = f.Overlap
	}
	if f.Completion != "callback" {
		return
	}
	if f.MaxRuntime != "" {
		body["max_runtime"] = f.MaxRuntime
	} else if f.Editing {
		body["max_runtime"] = nil
	}
}

// concurrencyBody adds the event's concurrency key and limit to body when
// a key is typed; on edit an emptied key removes it (null), whatever the
// limit says. A limit that is not a number is refused here; the API checks
// the rest (the key's characters, 1 to 1000, a limit missing).
func (f *eventForm) concurrencyBody(body map[string]any) bool {
	if f.ConcurrencyKey == "" {
		if f.Editing {
			body["concurrency"] = nil
		}
		return true
	}
	conc := map[string]any{"key": f.ConcurrencyKey}
	if f.ConcurrencyLimit != "" {
		n, err := strconv.Atoi(f.ConcurrencyLimit)
		if err != nil {
			f.Errors["concurrency_limit"] = "must be a whole number from 1 to 1000"
			return false
		}
		conc["limit"] = n
	}
	body["concurrency"] = conc
	return true
}

// brokerParams adds a broker action's destination to params, read as the
// CLI's --to, --jetstream and --record-key read it (client.PublishParams);
// false when it is missing or malformed (its error is in f.Errors).
func (f *eventForm) brokerParams(params map[string]any) bool {
	if f.To == "" {
		f.Errors["to"] = "is required for a broker: " + brokerToHint[f.ActionType]
		return false
	}
	to, err := client.PublishParams(client.ActionType(f.ActionType), f.To, f.JetStream, f.RecordKey)
	if err != nil {
		f.Errors["to"] = `must be exchange:routing_key (":queue" for the default exchange)`
		return false
	}
	maps.Copy(params, to)
	return true
}

// brokerToHint says what To holds for each broker.
var brokerToHint = map[string]string{"nats": "the subject", "amqp": "exchange:routing_key",
	"kafka": "the topic", "redis_stream": "the stream"}

// brokerTo is brokerParams read back from an event's params.
func brokerTo(typ string, params map[string]any) (to string, jetstream bool, recordKey string) {
	str := func(name string) string {
		s, _ := params[name].(string)
		return s
	}
	switch typ {
	case "nats":
		js, _ := params["jetstream"].(bool)
		return str("subject"), js, ""
	case "amqp":
		return str("exchange") + ":" + str("routing_key"), false, ""
	case "kafka":
		return str("topic"), false, str("key")
	case "redis_stream":
		return str("stream"), false, ""
	}
	return "", false, ""
}

// formParams are the action params the form shows and sets; an edit keeps
// every other param of the event (headers, a body template, Kafka's SASL
// mechanism, a stream's trim …) as it was, fingerprints included, which
// the API puts back (internal/redact.Restore).
var formParams = map[string]bool{"url": true, "endpoint_id": true, "method": true, "client_name": true,
	"subject": true, "jetstream": true, "exchange": true, "routing_key": true, "topic": true, "key": true,
	"stream": true, "encryption_jwk": true}

// keepParams copies into body's action the params of the stored action
// that the form does not manage, when the action keeps its type: saving an
// edit must not drop what the form cannot show.
func keepParams(body map[string]any, stored client.Action) {
	action, _ := body["action"].(map[string]any)
	if action == nil || action["type"] != string(stored.Type) {
		return
	}
	params, _ := action["params"].(map[string]any)
	for k, v := range stored.Params {
		if _, set := params[k]; !set && !formParams[k] {
			params[k] = v
		}
	}
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

// errorsBehindZone finds the schedule's own errors hidden by a bad time zone:
// the API names only the first bad field, so when that is the zone the
// schedule is previewed again in UTC and its error, if any, goes under its
// own field too (the start is left out: whether it is past depends on the
// zone).
func (c *Console) errorsBehindZone(r *http.Request, f *eventForm) {
	if _, bad := f.Errors["timezone"]; !bad {
		return
	}
	g := *f
	g.Timezone, g.Errors = "UTC", map[string]string{}
	body := map[string]any{"count": 1}
	if g.scheduleBody(body) {
		_, err := c.sdk(r).Schedules.PreviewFields(r.Context(), body)
		g.apiFailed(sdkError(err))
	}
	for field, msg := range g.Errors {
		if field != "timezone" && field != "start_time" {
			f.Errors[field] = msg
		}
	}
}

// pickerLimit bounds the endpoints and calendars the form offers.
const pickerLimit = 100

// choices fills the endpoint, calendar and topic pickers with what the
// token can read. The event's own calendars come first, in their order
// (the first calendar that blocks a day decides), then the others by name.
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
	return c.topicChoices(r, f)
}

// topicChoices fills the topic picker with the catalogue's first page; the
// event's own topic is offered even when it is not among them.
func (c *Console) topicChoices(r *http.Request, f *eventForm) error {
	page, err := c.sdk(r).Topics.List(r.Context(), client.ListTopicsParams{Limit: client.Ptr(pickerLimit)})
	if err != nil && !unlisted(err) {
		return sdkError(err)
	}
	if page != nil {
		for _, t := range page.Items {
			f.Topics = append(f.Topics, topicChoice{Name: t.Name, Description: t.Description})
		}
	}
	if f.Topic != "" && !slices.ContainsFunc(f.Topics, func(t topicChoice) bool { return t.Name == f.Topic }) {
		f.Topics = append(f.Topics, topicChoice{Name: f.Topic})
	}
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
		Completion: "response", Overlap: "allow", Errors: map[string]string{}}
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
			c.errorsBehindZone(r, &f)
			c.renderForm(w, r, s, f, http.StatusBadRequest)
			return
		}
		c.fail(w, r, s, err)
		return
	}
	redirect(w, r, Prefix+"/events/"+url.PathEscape(ev.ID), "Event created.")
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
	stored, err := c.sdk(r).Events.Get(r.Context(), id)
	if err != nil {
		c.fail(w, r, s, sdkError(err))
		return
	}
	keepParams(body, stored.Action)
	if _, err := c.sdk(r).Events.UpdateFields(r.Context(), id, body); err != nil {
		if err = sdkError(err); f.apiFailed(err) {
			c.errorsBehindZone(r, &f)
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

// previewAnswer is what the form's live preview receives: Error is the
// first problem, Errors every field's own (form field → message).
type previewAnswer struct {
	Timezone string            `json:"timezone,omitempty"`
	Instants []previewInstant  `json:"instants"`
	Error    string            `json:"error,omitempty"`
	Field    string            `json:"field,omitempty"`
	Errors   map[string]string `json:"errors,omitempty"`
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
			if f.apiFailed(err) {
				c.errorsBehindZone(r, &f)
			}
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
	if len(f.Errors) > 0 {
		out.Errors = f.Errors
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}
