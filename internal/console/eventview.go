package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/qhronos/qhronos/client"
)

// eventView is an event as the event pages show it, read from the SDK's
// client.Event: optional members flattened to plain values so a template
// never prints a pointer.
type eventView struct {
	ID, Name, Description, Timezone, Status string
	LastStatus, CreatedBy, CreatedVia       string
	StartTime, CreatedAt, UpdatedAt         time.Time
	NextRunAt, LastRunAt                    *time.Time
	RRule, Cron, Schedule                   string
	HasRRule, HasCron                       bool
	Action                                  client.Action
	EndpointID                              string
	// Topic is the topic an event fans out to ("" for an event that runs
	// an action); its Action then reads {"type": "topic"}.
	Topic                    string
	Tags                     []string
	CatchUp, Timeout, Jitter string
	// Completion is "response" or "callback"; MaxRuntime is a callback
	// run's deadline without a completion or heartbeat, as the API
	// writes it ("30m0s"), empty for response.
	Completion, MaxRuntime string
	// Overlap is the event's overlap policy ("allow" by default).
	Overlap string
	// ConcurrencyKey is the key whose limit of occurrences in flight the
	// event shares ("" for none), ConcurrencyLimit the limit it names.
	ConcurrencyKey   string
	ConcurrencyLimit int
	// Key names the event for upserts by key; Debounce and MaxWait are
	// their debounce (#29).
	Key, Debounce, MaxWait string
	DSTGap, DSTRepeat      string
	HMACSecretSet          bool
	Metadata               string
	MaxAttempts            *int
	Calendars              []calendarRef
	Version                int
	// The pause: until when (nil: until resumed by hand), why, by whom,
	// since when, and what its instants do on resume (skip or fire).
	PausedUntil, PausedAt               *time.Time
	PausedBy, PauseReason, PauseCatchUp string
}

// calendarRef is one of an event's calendars and its policy; Name is
// filled in when the token can read the calendar.
type calendarRef struct {
	ID, Policy, Name string
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func viewEvent(e *client.Event) eventView {
	v := eventView{ID: e.ID, Name: e.Name, Description: str(e.Description), Timezone: e.Timezone,
		Status: string(e.Status), LastStatus: str(e.LastStatus), CreatedBy: str(e.CreatedBy),
		CreatedVia: str(e.CreatedVia), StartTime: e.StartTime, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
		NextRunAt: e.NextRunAt, LastRunAt: e.LastRunAt, Action: e.Action, EndpointID: str(e.EndpointID),
		Tags: e.Tags, Timeout: str(e.Timeout), Jitter: str(e.Jitter), Version: e.Version,
		Key: str(e.Key), Debounce: str(e.Debounce), MaxWait: str(e.MaxWait), MaxRuntime: str(e.MaxRuntime),
		PausedUntil: e.PausedUntil, PausedAt: e.PausedAt, PausedBy: str(e.PausedBy), PauseReason: str(e.PauseReason)}
	if v.Timezone == "" {
		v.Timezone = "UTC"
	}
	if e.Rrule != nil {
		v.RRule, v.HasRRule = *e.Rrule, true
	}
	if e.Cron != nil {
		v.Cron, v.HasCron = *e.Cron, true
	}
	if e.Schedule != nil {
		if b, err := json.Marshal(e.Schedule); err == nil {
			v.Schedule = string(b)
		}
	}
	if e.CatchUp != nil {
		v.CatchUp = string(*e.CatchUp)
	}
	v.Completion = "response"
	if e.Completion != nil && *e.Completion != "" {
		v.Completion = string(*e.Completion)
	}
	v.Overlap = "allow"
	if e.Overlap != nil && *e.Overlap != "" {
		v.Overlap = string(*e.Overlap)
	}
	if e.Concurrency != nil {
		v.ConcurrencyKey, v.ConcurrencyLimit = e.Concurrency.Key, e.Concurrency.Limit
	}
	if e.PauseCatchUp != nil {
		v.PauseCatchUp = string(*e.PauseCatchUp)
	}
	if e.HmacSecretSet != nil {
		v.HMACSecretSet = *e.HmacSecretSet
	}
	if e.Dst != nil {
		if e.Dst.Gap != nil {
			v.DSTGap = string(*e.Dst.Gap)
		}
		if e.Dst.Repeat != nil {
			v.DSTRepeat = string(*e.Dst.Repeat)
		}
	}
	if len(e.Metadata) > 0 && string(e.Metadata) != "null" {
		v.Metadata = string(e.Metadata)
	}
	if e.Retry != nil {
		v.MaxAttempts = e.Retry.MaxAttempts
	}
	v.Topic = str(e.Topic)
	if v.Topic == "" && e.Action.Type == client.ActionTypeTopic {
		v.Topic = v.param("topic")
	}
	if v.EndpointID == "" {
		if id, ok := e.Action.Params["endpoint_id"].(string); ok {
			v.EndpointID = id
		}
	}
	for _, c := range e.Calendars {
		ref := calendarRef{ID: c.ID, Policy: "skip"}
		if c.Policy != nil {
			ref.Policy = string(*c.Policy)
		}
		v.Calendars = append(v.Calendars, ref)
	}
	return v
}

func (e eventView) param(name string) string {
	s, _ := e.Action.Params[name].(string)
	return s
}

// ActionType is the delivery kind.
func (e eventView) ActionType() string { return string(e.Action.Type) }

// Target is where the event delivers, in words.
func (e eventView) Target() string {
	if e.Topic != "" {
		return "topic " + e.Topic
	}
	if text, ok := brokerTarget(string(e.Action.Type), e.Action.Params); ok {
		return text
	}
	if e.EndpointID != "" {
		return "endpoint " + e.EndpointID
	}
	switch e.Action.Type {
	case "websocket":
		return "WebSocket client " + e.param("client_name")
	case "apicall":
		m := e.param("method")
		if m == "" {
			m = "POST"
		}
		return m + " " + e.param("url")
	}
	return e.param("url")
}

// RuleKind is once, rrule, cron or schedule.
func (e eventView) RuleKind() string {
	switch {
	case e.HasRRule:
		return "rrule"
	case e.HasCron:
		return "cron"
	case e.Schedule != "":
		return "schedule"
	}
	return "once"
}

// RuleText is the recurrence as the API holds it.
func (e eventView) RuleText() string {
	switch e.RuleKind() {
	case "rrule":
		return e.RRule
	case "cron":
		return e.Cron
	case "schedule":
		return e.Schedule
	}
	return ""
}

// InWords describes the schedule for people.
func (e eventView) InWords() string {
	return describeRule(e.RuleKind(), e.RuleText(), e.StartTime, e.Timezone)
}

// Callback is true when the event's runs complete by callback.
func (e eventView) Callback() bool { return e.Completion == "callback" }

// Paused is true while the event is paused.
func (e eventView) Paused() bool { return e.Status == "paused" }

// Location is the event's zone (UTC when it cannot be loaded).
func (e eventView) Location() *time.Location {
	if loc, err := time.LoadLocation(e.Timezone); err == nil {
		return loc
	}
	return time.UTC
}

// upcomingRow is one planned instant on the event page: when it fires and
// what changed it — skipped (and why), moved by hand or rolled by a
// calendar (and from where), or lying inside the current pause.
type upcomingRow struct {
	At       time.Time
	Local    string // the instant in the event's zone, for the date-time picker
	Shown    string // the instant as the page writes it, in the event's zone
	Skipped  bool
	Reason   string
	Original *time.Time
	// Mark is "skipped", "moved", "rolled", "paused" or "" (fires as planned).
	Mark string
	// Key is the planned instant an exception addresses: the original of a
	// moved instant, the instant itself otherwise.
	Key time.Time
}

// upcoming marks the preview's instants. An instant before the pause's
// end (or any, paused without an end) is inside the pause: the API plans
// the series as if active, so the pause is the console's to mark.
func upcoming(ev eventView, p *client.Preview, exceptions []client.Exception) []upcomingRow {
	if p == nil {
		return nil
	}
	moved := map[time.Time]bool{}
	for _, ex := range exceptions {
		if ex.Action == "move" {
			moved[ex.At.UTC()] = true
		}
	}
	loc := ev.Location()
	out := make([]upcomingRow, 0, len(p.Instants))
	for _, in := range p.Instants {
		r := upcomingRow{At: in.Utc, Local: in.Utc.In(loc).Format("2006-01-02T15:04:05"), Shown: in.Utc.In(loc).Format(timeLayout), Reason: str(in.Reason),
			Original: in.Original, Key: in.Utc}
		r.Skipped = in.Skipped != nil && *in.Skipped
		switch {
		case r.Skipped:
			r.Mark = "skipped"
		case in.Original != nil && moved[in.Original.UTC()]:
			r.Mark, r.Key = "moved", *in.Original
		case in.Original != nil:
			r.Mark = "rolled"
		}
		if r.Skipped && in.Original != nil {
			r.Key = *in.Original
		}
		if ev.Paused() && !r.Skipped && (ev.PausedUntil == nil || in.Utc.Before(*ev.PausedUntil)) {
			r.Mark = "paused"
		}
		out = append(out, r)
	}
	return out
}

// historyView is one entry of the event's change history.
type historyView struct {
	At                       time.Time
	Action, Subject, Channel string
	Reason                   string
	Changes                  []changeView
}

// changeView is one field's change. Sensitive values arrive from the API
// as fingerprints ("••••a1b2c3d4"); the console shows what it gets.
type changeView struct {
	Field, From, To string
}

func viewHistory(entries []client.HistoryEntry) []historyView {
	out := make([]historyView, 0, len(entries))
	for _, h := range entries {
		v := historyView{At: h.At, Action: h.Action, Subject: h.Subject, Channel: h.Channel, Reason: h.Reason}
		fields := make([]string, 0, len(h.Changes))
		for f := range h.Changes {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			ch := h.Changes[f]
			v.Changes = append(v.Changes, changeView{Field: f, From: showValue(ch.From), To: showValue(ch.To)})
		}
		out = append(out, v)
	}
	return out
}

// showValue renders a changed value compactly: strings as they are,
// anything else as JSON; absent as an em dash.
func showValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(500, strings.TrimSpace(string(b)))
}

// deliveryView is one occurrence of the delivery history with its attempts.
type deliveryView struct {
	ID             string
	ScheduledAt    time.Time
	Status, Reason string
	Manual         bool
	StatusCode     *int
	Original       *time.Time
	Attempts       []attemptView
}

type attemptView struct {
	// ID is the attempt's own; OccurrenceID the occurrence it was made
	// for (the subscription page links it); SubscriptionID the
	// subscription a fan-out attempt delivered to ("" for an event's own
	// action).
	ID, OccurrenceID, SubscriptionID string
	Attempt                          int
	Manual                           bool
	StartedAt                        time.Time
	DurationMS                       int64
	Outcome                          string
	StatusCode                       *int
	Error, Excerpt                   string
	// LatenessMS is how late the attempt started; Truncated says the
	// API cut the response excerpt short.
	LatenessMS int64
	Truncated  bool
	// Request is what the attempt sent; nil when it was not recorded.
	Request *requestView
}

// requestView is an attempt's recorded request: headers by name, the body
// indented when it is JSON.
type requestView struct {
	Method, URL   string
	Headers       []headerView
	Body          string
	BodyJSON      bool
	BodyTruncated bool
}

type headerView struct{ Name, Value string }

func viewRequest(r *client.AttemptRequest) *requestView {
	if r == nil {
		return nil
	}
	v := &requestView{Method: r.Method, URL: r.URL, Body: r.Body, BodyTruncated: r.BodyTruncated}
	for name, value := range r.Headers {
		v.Headers = append(v.Headers, headerView{Name: name, Value: value})
	}
	sort.Slice(v.Headers, func(i, j int) bool { return v.Headers[i].Name < v.Headers[j].Name })
	var buf bytes.Buffer
	if !r.BodyTruncated && json.Valid([]byte(r.Body)) && json.Indent(&buf, []byte(r.Body), "", "  ") == nil {
		v.Body, v.BodyJSON = buf.String(), true
	}
	return v
}

func viewDelivery(o client.Occurrence) deliveryView {
	d := deliveryView{ID: o.ID, ScheduledAt: o.ScheduledAt, Status: string(o.Status), StatusCode: o.StatusCode,
		Original: o.OriginalScheduledAt, Manual: o.Manual != nil && *o.Manual}
	if o.Reason != nil {
		d.Reason = string(*o.Reason)
	}
	return d
}

func viewAttempt(a client.Attempt) attemptView {
	v := attemptView{ID: a.ID, OccurrenceID: a.OccurrenceID, SubscriptionID: str(a.SubscriptionID), Attempt: a.Attempt,
		Manual: a.Manual != nil && *a.Manual, StartedAt: a.StartedAt, Outcome: a.Outcome, StatusCode: a.StatusCode,
		Error: str(a.Error), Excerpt: str(a.ResponseExcerpt)}
	if a.DurationMs != nil {
		v.DurationMS = int64(*a.DurationMs)
	}
	if a.LatenessMs != nil {
		v.LatenessMS = int64(*a.LatenessMs)
	}
	v.Truncated = a.Truncated != nil && *a.Truncated
	v.Request = viewRequest(a.Request)
	return v
}

// overlapChoice is one overlap policy as the event form offers it.
type overlapChoice struct{ Value, Label string }

// overlapChoices are the overlap policies, the default first.
var overlapChoices = []overlapChoice{
	{"allow", "allow: fire anyway (default)"},
	{"skip", "skip: record the instant skipped"},
	{"buffer_one", "buffer one: one instant waits for the run to end, later ones are skipped"},
	{"buffer_all", "buffer all: every instant waits; they run one after another"},
	{"cancel_previous", "cancel previous: cancel the run in progress, then fire"},
}

// overlapLabel describes an event's overlap policy.
func overlapLabel(policy string) string {
	for _, c := range overlapChoices {
		if c.Value == policy {
			return c.Label
		}
	}
	return policy
}
