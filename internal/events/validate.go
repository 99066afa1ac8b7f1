package events

import (
	"encoding/base64"
	"encoding/json"
	"github.com/qhronos/qhronos/internal/fanout"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

// Validator checks an event body against the product's rules and writes it
// onto an event: it seals a new signing secret and compiles the rule, which
// it returns so that the caller plans with it instead of compiling again.
type Validator struct {
	Actions    Actions
	Secrets    Sealer
	Recurrence recurrence.Limits
	MaxTimeout time.Duration // per-event attempt timeout cap
}

// Actions validates an action's parameters (actions.Registry).
type Actions interface {
	Validate(kind string, params json.RawMessage) error
}

// Sealer encrypts a signing secret for storage (secrets.Box).
type Sealer interface {
	Seal(plaintext []byte) ([]byte, error)
}

// The product's limits on what an event holds (API.md).
const (
	MaxTags          = 50
	MaxTagLength     = 100
	MaxMetadataBytes = 64 << 10

	maxNameLength        = 255
	maxDescriptionLength = 4096
	maxSecretLength      = 1024
)

// Apply validates in and writes it onto ev. On create ev starts empty;
// on update it holds the stored event and absent members keep their value.
// It returns the compiled rule of the resulting event.
func (v *Validator) Apply(in *Input, ev *model.Event, creating bool, now time.Time) (*recurrence.Rule, error) {
	return v.apply(in, ev, creating, nil, now)
}

// Replace validates in as a create would, onto ev: an upsert by key that
// replaces a stored event. Its start_time may stay at kept, the stored
// event's, even when that has passed (a recurring event sent again as it
// was must not be refused).
func (v *Validator) Replace(in *Input, ev *model.Event, kept time.Time, now time.Time) (*recurrence.Rule, error) {
	return v.apply(in, ev, true, &kept, now)
}

func (v *Validator) apply(in *Input, ev *model.Event, creating bool, kept *time.Time, now time.Time) (*recurrence.Rule, error) {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" {
			return nil, input.BadRequest("name", "must not be empty")
		}
		if utf8.RuneCountInString(name) > maxNameLength {
			return nil, input.BadRequestf("name", "must be at most %d characters", maxNameLength)
		}
		ev.Name = name
	} else if creating {
		return nil, input.BadRequest("name", "is required")
	}
	if in.Description != nil {
		if utf8.RuneCountInString(*in.Description) > maxDescriptionLength {
			return nil, input.BadRequestf("description", "must be at most %d characters", maxDescriptionLength)
		}
		ev.Description = *in.Description
	}
	if in.TracePropagation != nil {
		ev.NoTracePropagation = !*in.TracePropagation
	}
	if err := v.applyTags(in, ev); err != nil {
		return nil, err
	}
	if err := v.applyMetadata(in, ev); err != nil {
		return nil, err
	}
	if err := v.applyAction(in, ev, creating); err != nil {
		return nil, err
	}
	if err := v.applyPolicies(in, ev); err != nil {
		return nil, err
	}
	if in.HMACSecret != nil {
		secret := *in.HMACSecret
		if err := CheckSecret("hmac_secret", secret, 1); err != nil {
			return nil, err
		}
		sealed, err := v.Secrets.Seal([]byte(secret))
		if err != nil {
			return nil, err
		}
		ev.HMACSecret, ev.PreviousSecret, ev.PreviousSecretExpires = sealed, nil, nil
	}
	return v.applySchedule(in, ev, creating, true, kept, now)
}

func (v *Validator) applyTags(in *Input, ev *model.Event) error {
	if in.Tags == nil {
		if ev.Tags == nil {
			ev.Tags = []string{}
		}
		return nil
	}
	tags := *in.Tags
	if len(tags) > MaxTags {
		return input.BadRequestf("tags", "at most %d tags", MaxTags)
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		switch {
		case t == "" || strings.TrimSpace(t) != t:
			return input.BadRequestf("tags", "tag %q must be non-empty without surrounding spaces", t)
		case utf8.RuneCountInString(t) > MaxTagLength:
			return input.BadRequestf("tags", "tags must be at most %d characters", MaxTagLength)
		case strings.ContainsAny(t, ",\x00\r\n"):
			return input.BadRequestf("tags", "tag %q must not contain commas or control characters", t)
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	ev.Tags = out
	return nil
}

func (v *Validator) applyMetadata(in *Input, ev *model.Event) error {
	raw, ok := in.members["metadata"]
	if !ok {
		if ev.Metadata == nil {
			ev.Metadata = json.RawMessage("{}")
		}
		return nil
	}
	if len(raw) > MaxMetadataBytes {
		return input.BadRequestf("metadata", "must be at most %d bytes of JSON", MaxMetadataBytes)
	}
	if input.IsNull(raw) {
		ev.Metadata = json.RawMessage("null")
		return nil
	}
	ev.Metadata = append(json.RawMessage(nil), raw...)
	return nil
}

// applyAction resolves action, topic and the legacy webhook member: action
// wins over webhook; "q:<client>" means a websocket client-hook; anything
// else is a webhook URL. topic (an event that fans out to the topic's
// subscriptions) excludes both.
func (v *Validator) applyAction(in *Input, ev *model.Event, creating bool) error {
	var a model.Action
	switch {
	case in.Topic != nil || in.Action != nil && in.Action.Type == model.ActionTopic:
		return applyTopic(in, ev)
	case in.Action != nil:
		a = *in.Action
		if a.Type == "" {
			return input.BadRequest("action.type", "is required")
		}
	case in.Webhook != nil:
		w := strings.TrimSpace(*in.Webhook)
		if client, ok := strings.CutPrefix(w, "q:"); ok {
			params, _ := json.Marshal(map[string]string{"client_name": client})
			a = model.Action{Type: "websocket", Params: params}
		} else {
			params, _ := json.Marshal(map[string]string{"url": w})
			a = model.Action{Type: "webhook", Params: params}
		}
	case creating:
		return input.BadRequest("action", "is required (or topic, or the legacy webhook field)")
	default:
		return nil
	}
	if len(a.Params) == 0 || input.IsNull(a.Params) {
		a.Params = json.RawMessage("{}")
	}
	if err := v.Actions.Validate(a.Type, a.Params); err != nil {
		return err
	}
	ev.Action, ev.Webhook = a, legacyWebhook(a)
	return nil
}

// applyTopic makes ev fan out to a topic's subscriptions. The event shows
// its topic as the member topic and as an action of type "topic" (so that
// clients reading action keep working); sending both back, as a read-edit-
// write does, is the same topic once.
func applyTopic(in *Input, ev *model.Event) error {
	var name string
	if in.Topic != nil {
		name = *in.Topic
	}
	if in.Action != nil {
		if in.Action.Type != model.ActionTopic {
			return input.BadRequest("topic", "give topic or action, not both")
		}
		var p model.TopicParams
		if err := input.DecodeStrict(in.Action.Params, "action.params", &p); err != nil {
			return err
		}
		if name != "" && p.Topic != name {
			return input.BadRequest("topic", "differs from action.params.topic: give one of them")
		}
		name = p.Topic
	}
	if in.Webhook != nil && *in.Webhook != "" {
		return input.BadRequest("topic", "give topic or webhook, not both")
	}
	if err := fanout.CheckTopicName("topic", name); err != nil {
		return err
	}
	ev.Action, ev.Webhook = model.TopicAction(name), ""
	return nil
}

// legacyWebhook is the original API's webhook field for an action.
func legacyWebhook(a model.Action) string {
	var p struct {
		URL        string `json:"url"`
		ClientName string `json:"client_name"`
	}
	_ = json.Unmarshal(a.Params, &p)
	switch a.Type {
	case "webhook":
		return p.URL
	case "websocket":
		return "q:" + p.ClientName
	}
	return ""
}

func (v *Validator) applyPolicies(in *Input, ev *model.Event) error {
	if in.CatchUp != nil {
		switch *in.CatchUp {
		case "all", "latest", "none":
			ev.CatchUp = *in.CatchUp
		default:
			return input.BadRequest("catch_up", `must be one of "all", "latest", "none"`)
		}
	} else if ev.CatchUp == "" {
		ev.CatchUp = "all"
	}
	if err := applyTimePolicy(in, ev); err != nil {
		return err
	}
	if err := applyCompletion(in, ev); err != nil {
		return err
	}
	if err := applyOverlap(in, ev); err != nil {
		return err
	}
	if err := applyConcurrency(in, ev); err != nil {
		return err
	}
	if in.Timeout != nil {
		d, err := input.ParseDuration("timeout", *in.Timeout, time.Second, v.MaxTimeout)
		if err != nil {
			return err
		}
		ev.TimeoutMS = d.Milliseconds()
	}
	if raw, ok := in.members["retry"]; ok {
		if input.IsNull(raw) {
			ev.Retry = nil
			return nil
		}
		var r model.Retry
		if err := input.DecodeStrict(raw, "retry", &r); err != nil {
			return err
		}
		if r.MaxAttempts != nil && (*r.MaxAttempts < 1 || *r.MaxAttempts > 100) {
			return input.BadRequest("retry.max_attempts", "must be between 1 and 100")
		}
		var initial, maxB time.Duration
		var err error
		if r.InitialBackoff != "" {
			if initial, err = input.ParseDuration("retry.initial_backoff", r.InitialBackoff, time.Second, 24*time.Hour); err != nil {
				return err
			}
			r.InitialBackoff = storedDuration(r.InitialBackoff, initial)
		}
		if r.MaxBackoff != "" {
			if maxB, err = input.ParseDuration("retry.max_backoff", r.MaxBackoff, time.Second, 7*24*time.Hour); err != nil {
				return err
			}
			r.MaxBackoff = storedDuration(r.MaxBackoff, maxB)
		}
		if initial > 0 && maxB > 0 && maxB < initial {
			return input.BadRequest("retry.max_backoff", "must not be less than retry.initial_backoff")
		}
		ev.Retry = &r
	}
	return nil
}

// applySchedule resolves start_time, time zone and recurrence, validates the
// result by compiling it, and enforces "start_time in the future" on create
// and whenever it changes.
func (v *Validator) applySchedule(in *Input, ev *model.Event, creating, requireFuture bool, kept *time.Time,
	now time.Time) (*recurrence.Rule, error) {
	if in.Timezone != nil {
		ev.Timezone = *in.Timezone
	}
	if ev.Timezone == "" {
		ev.Timezone = "UTC"
	}
	loc, err := time.LoadLocation(ev.Timezone)
	if err != nil || ev.Timezone == "Local" {
		return nil, input.BadRequestf("timezone", "unknown time zone %q (use an IANA name such as Europe/Prague)", ev.Timezone)
	}
	if err := in.applyRecurrence(ev); err != nil {
		return nil, err
	}
	startChanged := false
	if in.StartTime != nil {
		t, err := recurrence.ParseStartTime(*in.StartTime, loc, now)
		if err != nil {
			return nil, err
		}
		t = model.RoundUp(t)
		startChanged = (creating || !t.Equal(ev.StartTime)) && (kept == nil || !t.Equal(*kept))
		ev.StartTime = t
	} else if creating {
		if ev.Cron == nil {
			return nil, input.BadRequest("start_time", "is required (RFC 3339 or e.g. \"tomorrow at 9am\")")
		}
		// For cron, start_time is an optional inclusive lower bound.
		ev.StartTime = model.RoundUp(now)
	}
	if requireFuture && startChanged && !ev.StartTime.After(now) {
		return nil, input.BadRequest("start_time", "must be in the future")
	}
	return ev.Compile(v.Recurrence)
}

// storedDuration is how a retry duration is stored: as sent, unless only
// the API's parser reads it ("1d"); the policy is kept as text and read at
// delivery with time.ParseDuration, by this version and older ones.
func storedDuration(text string, d time.Duration) string {
	if _, err := time.ParseDuration(text); err == nil {
		return text
	}
	return d.String()
}

// MinSecretKey is the shortest signing key accepted where no client of the
// original API can be sending one: a "whsec_" secret's decoded key (the
// original knew no such form) and an endpoint's secret (the original had no
// endpoints). 16 bytes is 128 bits, the floor notification channels use too.
// An event's plain hmac_secret keeps accepting any length from 1 byte: the
// original API took any string there (QHRONOS-COMPAT.md sets no rule), so a
// minimum would turn its clients' creates into 400s.
const MinSecretKey = 16

// CheckSecret applies the rules of a signing secret sent in field (an
// event's hmac_secret, an endpoint's secret): plainMin (at least 1) to 1024
// bytes, and a "whsec_" secret's key part must be the base64 of at least MinSecretKey
// bytes — else the sender would sign with the text's bytes while a Standard
// Webhooks receiver decodes it, and every signature would fail to verify.
func CheckSecret(field, secret string, plainMin int) error {
	if len(secret) < max(plainMin, 1) || len(secret) > maxSecretLength {
		return input.BadRequestf(field, "must be %d to %d bytes", max(plainMin, 1), maxSecretLength)
	}
	rest, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return nil
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) == 0 {
		return input.BadRequest(field, "a whsec_ secret must be followed by the base64 of its key")
	}
	if len(key) < MinSecretKey {
		return input.BadRequestf(field, "a whsec_ secret's key must be at least %d bytes (%d here)", MinSecretKey, len(key))
	}
	return nil
}

// PreviewRule compiles the schedule and time-policy members of in the way
// Create would, except that a past start_time is allowed (a preview shows
// what a series would do) and start_time defaults to now.
func (v *Validator) PreviewRule(in *Input, now time.Time) (*model.Event, *recurrence.Rule, error) {
	if in.StartTime == nil {
		text := now.UTC().Format(time.RFC3339Nano)
		in.StartTime = &text
	}
	ev := &model.Event{}
	if err := applyTimePolicy(in, ev); err != nil {
		return nil, nil, err
	}
	rule, err := v.applySchedule(in, ev, true, false, nil, now)
	return ev, rule, err
}

// Preview is what the preview endpoints show: the rows a schedule will
// write next, in its zone.
type Preview struct {
	Location *time.Location
	Rows     []model.Planned
}
