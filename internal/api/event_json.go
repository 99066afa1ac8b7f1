package api

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/redact"
)

// eventJSON is the event resource. Secrets are never part of it.
type eventJSON struct {
	ID            string              `json:"id"`
	Name          string              `json:"name"`
	Description   string              `json:"description"`
	StartTime     time.Time           `json:"start_time"`
	Timezone      string              `json:"timezone"`
	RRule         *string             `json:"rrule"`
	Schedule      json.RawMessage     `json:"schedule"`
	Cron          *string             `json:"cron"`
	Action        json.RawMessage     `json:"action"`
	Topic         *string             `json:"topic"` // set instead of action: the event fans out
	Webhook       string              `json:"webhook"`
	Metadata      json.RawMessage     `json:"metadata"`
	Tags          []string            `json:"tags"`
	Status        string              `json:"status"`
	Retry         json.RawMessage     `json:"retry"`
	CatchUp       string              `json:"catch_up"`
	Timeout       *string             `json:"timeout"`
	HMACSecretSet bool                `json:"hmac_secret_set"`
	CreatedBy     string              `json:"created_by"`
	CreatedVia    string              `json:"created_via"`
	Version       int64               `json:"version"`
	NextRunAt     *time.Time          `json:"next_run_at"`
	LastRunAt     *time.Time          `json:"last_run_at"`
	LastStatus    string              `json:"last_status"`
	CreatedAt     time.Time           `json:"created_at"`
	UpdatedAt     time.Time           `json:"updated_at"`
	DST           *model.DST          `json:"dst"`
	Jitter        *string             `json:"jitter"`
	Calendars     []model.CalendarRef `json:"calendars"`
	PausedAt      *time.Time          `json:"paused_at"`
	PausedUntil   *time.Time          `json:"paused_until"`
	PauseReason   string              `json:"pause_reason"`
	PausedBy      string              `json:"paused_by"`
	PauseCatchUp  string              `json:"pause_catch_up,omitempty"`
	EndpointID    *string             `json:"endpoint_id"`
	// TracePropagation: traceparent goes to the receivers (#26).
	TracePropagation bool `json:"trace_propagation"`
	// Key names the event for PUT /events/by-key/{key}; null when it has
	// none. Debounce and MaxWait are the debounce of its upserts (#29).
	Key      *string `json:"key"`
	Debounce *string `json:"debounce"`
	MaxWait  *string `json:"max_wait"`
	// Completion is "response" or "callback"; MaxRuntime is a callback
	// run's deadline without a completion or heartbeat (null otherwise).
	Completion string  `json:"completion"`
	MaxRuntime *string `json:"max_runtime"`
	// Overlap is what an instant does while a run is in progress.
	Overlap string `json:"overlap"`
	// Concurrency is the key whose limit the event shares (null: none).
	Concurrency *model.Concurrency `json:"concurrency"`
}

func rawOrNull(j json.RawMessage) json.RawMessage {
	if len(j) == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(j)
}

// toEventJSON is the event as answers show it: sensitive values in the
// action's params and the webhook URL as r shows them (fingerprints).
func toEventJSON(r *redact.Redactor, ev *model.Event) eventJSON {
	out := eventJSON{
		ID: ev.ID, Name: ev.Name, Description: ev.Description, StartTime: ev.StartTime, Timezone: ev.Timezone,
		RRule: ev.RRule, Schedule: rawOrNull(ev.Schedule.EchoJSON()), Cron: ev.Cron,
		Action: mustJSON(model.Action{Type: ev.Action.Type, Params: r.JSON(ev.Action.Params)}), Webhook: r.URL(ev.Webhook), Metadata: rawOrNull(ev.Metadata), Tags: ev.Tags, Status: string(ev.Status),
		Retry: mustJSON(ev.Retry), CatchUp: ev.CatchUp, HMACSecretSet: len(ev.HMACSecret) > 0,
		CreatedBy: ev.CreatedBy, CreatedVia: ev.CreatedVia, Version: ev.Version, NextRunAt: ev.NextRunAt,
		LastRunAt: ev.LastRunAt, LastStatus: ev.LastStatus, CreatedAt: ev.CreatedAt, UpdatedAt: ev.UpdatedAt,
		EndpointID: ev.EndpointID, TracePropagation: !ev.NoTracePropagation, Completion: ev.Completion,
		Overlap: ev.OverlapPolicy(), Concurrency: ev.Concurrency,
	}
	if out.Completion == "" {
		out.Completion = model.CompletionResponse
	}
	if topic := ev.Topic(); topic != "" {
		out.Topic = &topic
	}
	if ev.Callback() {
		d := ev.RunDeadline().String()
		out.MaxRuntime = &d
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if !ev.DST.IsZero() {
		dst := ev.DST
		out.DST = &dst
	}
	if ev.Jitter > 0 {
		j := ev.Jitter.String()
		out.Jitter = &j
	}
	if ev.Key != "" {
		k := ev.Key
		out.Key = &k
	}
	if ev.Debounce > 0 {
		d := ev.Debounce.String()
		out.Debounce = &d
	}
	if ev.MaxWait > 0 {
		d := ev.MaxWait.String()
		out.MaxWait = &d
	}
	out.Calendars = ev.Calendars
	if out.Calendars == nil {
		out.Calendars = []model.CalendarRef{}
	}
	if ev.Status == model.EventPaused {
		out.PausedAt, out.PausedUntil, out.PauseReason, out.PausedBy = ev.PausedAt, ev.PausedUntil, ev.PauseReason, ev.PausedBy
		out.PauseCatchUp = ev.PauseCatchUp
	}
	if ev.TimeoutMS > 0 {
		d := (time.Duration(ev.TimeoutMS) * time.Millisecond).String()
		out.Timeout = &d
	}
	return out
}

// etag is the event's strong validator: its id and version.
func etag(ev *model.Event) string {
	if ev.Status == model.EventInactive {
		// A one-time event's end is read, not written: its version stays,
		// and a cached copy from before the end must not validate.
		return strings.TrimSuffix(versionETag(ev.ID, ev.Version), `"`) + `-ended"`
	}
	return versionETag(ev.ID, ev.Version)
}

// occurrenceJSON is the occurrence resource; id and occurrence_id are the same.
type occurrenceJSON struct {
	ID           string     `json:"id"`
	OccurrenceID string     `json:"occurrence_id"`
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
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	// Reason says why a skipped, missed or cancelled row did not fire;
	// OriginalScheduledAt is where a moved or rolled row was planned.
	Reason              *string    `json:"reason"`
	OriginalScheduledAt *time.Time `json:"original_scheduled_at"`
	// Run is a callback event's run, once its delivery was accepted or
	// the receiver reported it.
	Run *runJSON `json:"run,omitempty"`
	// Fanout counts the deliveries of an occurrence of an event that
	// targets a topic, once its first round resolved them.
	Fanout *model.FanoutSummary `json:"fanout,omitempty"`
}

// runJSON is what an occurrence shows of its run: the deadline while it
// is running, the last heartbeat, and the receiver's report.
type runJSON struct {
	Deadline    *time.Time      `json:"deadline"`
	HeartbeatAt *time.Time      `json:"heartbeat_at"`
	Status      *string         `json:"status"`
	Output      json.RawMessage `json:"output"`
	ReportedAt  *time.Time      `json:"reported_at"`
	// DurationMS is from the occurrence's first attempt to the run's end
	// (its report or its timeout), once it is over.
	DurationMS *int64 `json:"duration_ms"`
}

// toRunJSON is o's run, or nil when o has none to show.
func toRunJSON(o *model.Occurrence) *runJSON {
	running := o.Status == model.OccurrenceRunning
	if !running && o.Status != model.OccurrenceTimedOut && o.RunStatus == nil && o.HeartbeatAt == nil {
		return nil
	}
	r := &runJSON{HeartbeatAt: o.HeartbeatAt, Status: o.RunStatus, ReportedAt: o.RunReportedAt,
		Output: json.RawMessage("null")}
	if o.RunOutput != nil {
		r.Output = json.RawMessage(*o.RunOutput)
	}
	if running {
		r.Deadline = o.LeaseExpiresAt
	}
	if o.Status.Terminal() && o.StartedAt != nil && o.CompletedAt != nil {
		d := o.CompletedAt.Sub(*o.StartedAt).Milliseconds()
		r.DurationMS = &d
	}
	return r
}

func toOccurrenceJSON(o *model.Occurrence) occurrenceJSON {
	out := occurrenceJSON{
		ID: o.ID, OccurrenceID: o.ID, EventID: o.EventID, ScheduledAt: o.ScheduledAt, Status: string(o.Status),
		Manual: o.Manual, AttemptCount: o.AttemptCount, StatusCode: o.StatusCode, ResponseBody: o.ResponseBody,
		ErrorMessage: o.ErrorMessage, StartedAt: o.StartedAt, CompletedAt: o.CompletedAt, CreatedAt: o.CreatedAt,
		UpdatedAt: o.UpdatedAt, Reason: o.Reason, OriginalScheduledAt: o.OriginalScheduledAt, Run: toRunJSON(o),
	}
	if o.Status == model.OccurrencePending || o.Status == model.OccurrenceRetrying {
		next := o.NextAttemptAt
		out.NextAttempt = &next
	}
	if f, err := model.DecodeFanout(o.Fanout); err == nil && f != nil {
		sum := f.Summary()
		out.Fanout = &sum
	}
	return out
}

func toOccurrencesJSON(os []model.Occurrence) []occurrenceJSON {
	out := make([]occurrenceJSON, 0, len(os))
	for i := range os {
		out = append(out, toOccurrenceJSON(&os[i]))
	}
	return out
}

// attemptJSON is one recorded try.
type attemptJSON struct {
	ID              string    `json:"id"`
	OccurrenceID    string    `json:"occurrence_id"`
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
	// SubscriptionID is the subscription a fan-out delivery went to.
	SubscriptionID *string `json:"subscription_id,omitempty"`
	// Request is the request it sent, secrets redacted when it was
	// recorded; null when it was not.
	Request *actions.SentRequest `json:"request"`
}

func toAttemptsJSON(as []model.Attempt) []attemptJSON {
	out := make([]attemptJSON, 0, len(as))
	for _, a := range as {
		aj := attemptJSON{ID: a.ID, OccurrenceID: a.OccurrenceID, Attempt: a.Attempt, Manual: a.Manual,
			StartedAt: a.StartedAt, DurationMS: a.DurationMS, StatusCode: a.StatusCode, Outcome: a.Outcome,
			Error: a.Error, ResponseExcerpt: a.ResponseExcerpt, Truncated: a.Truncated, LatenessMS: a.LatenessMS,
			SubscriptionID: a.SubscriptionID}
		if a.RequestJSON != nil {
			var r actions.SentRequest
			// Stored by the dispatcher from this type: a row that does
			// not decode shows as not recorded.
			if json.Unmarshal([]byte(*a.RequestJSON), &r) == nil {
				if r.Headers == nil {
					r.Headers = map[string]string{}
				}
				aj.Request = &r
			}
		}
		out = append(out, aj)
	}
	return out
}

// mustJSON encodes a decoded member of a stored event (a plain struct, which
// always encodes); nil becomes null.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
