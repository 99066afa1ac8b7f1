package events

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/redact"
)

// Change is one changed field of a history entry.
type Change struct {
	From any `json:"from"`
	To   any `json:"to"`
}

// Changes encodes hand-built changes (field → from/to) as a history entry's
// changes; nil when there are none. Values must encode as JSON.
func Changes(m map[string]Change) json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// diffField is one user-visible field of an event: compared as cmp, shown
// as show (the same unless the field holds a secret).
type diffField struct {
	cmp, show json.RawMessage
}

// Diff is the field-level difference between two versions of an event over
// its user-visible fields, as a history entry's changes: a JSON object whose
// members are the changed fields, each {"from": …, "to": …}. before nil is a
// creation (only the fields it sets are listed, from null); after nil is a
// removal. Sensitive values never appear: they show as r shows them in
// answers (internal/redact: fingerprints), and hmac_secret as the
// fingerprint of its sealed bytes (null when unset). Nil when nothing
// changed.
func Diff(r *redact.Redactor, before, after *model.Event) json.RawMessage {
	from, to := visibleFields(r, before), visibleFields(r, after)
	var changed []rawChange
	switch {
	case before == nil:
		for name, t := range to {
			if !emptyValue(t.show) {
				changed = append(changed, rawChange{name, nullJSON, t.show})
			}
		}
	case after == nil:
		for name, f := range from {
			if !emptyValue(f.show) {
				changed = append(changed, rawChange{name, f.show, nullJSON})
			}
		}
	default:
		for name, t := range to {
			if f := from[name]; !bytes.Equal(f.cmp, t.cmp) {
				show := f.show
				if show == nil {
					show = nullJSON
				}
				changed = append(changed, rawChange{name, show, t.show})
			}
		}
	}
	return encodeChanges(changed)
}

var nullJSON = json.RawMessage("null")

// rawChange is one changed field with its values already encoded.
type rawChange struct {
	name     string
	from, to json.RawMessage
}

// encodeChanges writes the changes object by hand, names sorted: its values
// are compact JSON already (encoding/json would re-validate each one, on
// every create).
func encodeChanges(changed []rawChange) json.RawMessage {
	if len(changed) == 0 {
		return nil
	}
	sort.Slice(changed, func(i, j int) bool { return changed[i].name < changed[j].name })
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range changed {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(c.name)) // field names are plain ASCII
		b.WriteString(`:{"from":`)
		b.Write(c.from)
		b.WriteString(`,"to":`)
		b.Write(c.to)
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes()
}

// emptyValue reports a value a creation or a removal need not list.
func emptyValue(v json.RawMessage) bool {
	switch string(v) {
	case "null", `""`, "[]", "{}":
		return true
	}
	return false
}

// visibleFields are ev's user-visible fields, or none for nil.
func visibleFields(r *redact.Redactor, ev *model.Event) map[string]diffField {
	out := map[string]diffField{}
	if ev != nil {
		eachField(r, ev, true, func(name string, f diffField) { out[name] = f })
	}
	return out
}

// Created is Diff(r, nil, ev) — a creation's changes, byte for byte —
// built straight from the event: no before side, no map of fields and no
// sort (eachField goes in name order), no comparison forms. A batch
// create builds a thousand of these a request.
func Created(r *redact.Redactor, ev *model.Event) json.RawMessage {
	b := make([]byte, 0, 512)
	b = append(b, '{')
	n := 0
	eachField(r, ev, false, func(name string, f diffField) {
		if emptyValue(f.show) {
			return
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = strconv.AppendQuote(b, name) // field names are plain ASCII
		b = append(b, `:{"from":null,"to":`...)
		b = append(b, f.show...)
		b = append(b, '}')
	})
	if n == 0 {
		return nil
	}
	return append(b, '}')
}

// eachField calls fn with each of ev's user-visible fields, in name
// order. withCmp false leaves out the comparison form where it differs
// from the shown one (a creation only shows).
func eachField(r *redact.Redactor, ev *model.Event, withCmp bool, fn func(name string, f diffField)) {
	plain := func(name string, v any) {
		b := marshalOrNull(v)
		fn(name, diffField{cmp: b, show: b})
	}
	str := func(name, v string) {
		b := quoteJSON(v)
		fn(name, diffField{cmp: b, show: b})
	}
	fn("action", actionField(r, ev.Action, withCmp))
	calendars := ev.Calendars
	if calendars == nil {
		calendars = []model.CalendarRef{}
	}
	plain("calendars", calendars)
	str("catch_up", ev.CatchUp)
	if ev.Concurrency != nil { // listed only when set
		plain("concurrency", ev.Concurrency)
	}
	if ev.Callback() { // listed only when set: "response" is the default
		str("completion", ev.Completion)
	}
	plain("cron", ev.Cron)
	str("description", ev.Description)
	if ev.DST.IsZero() {
		plain("dst", nil)
	} else {
		plain("dst", ev.DST)
	}
	secret := diffField{cmp: json.RawMessage("null"), show: json.RawMessage("null")}
	if len(ev.HMACSecret) > 0 {
		// The sealed bytes decide whether it changed; only their fingerprint shows.
		secret.show = marshalOrNull(r.Fingerprint(string(ev.HMACSecret)))
		secret.cmp = secret.show
		if withCmp {
			secret.cmp = marshalOrNull(ev.HMACSecret)
		}
	}
	fn("hmac_secret", secret)
	plain("jitter", shownDuration(ev.Jitter))
	if ev.Callback() {
		str("max_runtime", ev.RunDeadline().String())
	}
	fn("metadata", canonicalField(ev.Metadata))
	str("name", ev.Name)
	if p := ev.OverlapPolicy(); p != model.OverlapAllow { // listed only when set
		str("overlap", p)
	}
	if ev.PausedUntil != nil {
		str("paused_until", ev.PausedUntil.UTC().Format(time.RFC3339Nano))
	} else {
		plain("paused_until", nil)
	}
	plain("retry", ev.Retry)
	plain("rrule", ev.RRule)
	fn("schedule", canonicalField(ev.Schedule.EchoJSON()))
	if !ev.StartTime.IsZero() {
		str("start_time", ev.StartTime.UTC().Format(time.RFC3339Nano))
	} else {
		plain("start_time", nil)
	}
	str("status", string(ev.Status))
	tags := ev.Tags
	if tags == nil {
		tags = []string{}
	}
	plain("tags", tags)
	plain("timeout", shownDuration(time.Duration(ev.TimeoutMS)*time.Millisecond))
	str("timezone", ev.Timezone)
	if ev.NoTracePropagation { // listed only when opted out: null is the default, true
		plain("trace_propagation", false)
	}
	webhook := diffField{show: marshalOrNull(r.URL(ev.Webhook))}
	webhook.cmp = webhook.show
	if withCmp {
		webhook.cmp = marshalOrNull(ev.Webhook)
	}
	fn("webhook", webhook)
}

// quoteJSON is json.Marshal of a string, without its reflection for the
// common plain-ASCII string.
func quoteJSON(v string) json.RawMessage {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, err := json.Marshal(v) // escapes as encoding/json does; a string always marshals
			if err != nil {
				return json.RawMessage("null")
			}
			return b
		}
	}
	b := make([]byte, 0, len(v)+2)
	b = append(b, '"')
	b = append(b, v...)
	return append(b, '"')
}

// shownDuration is a duration as the API shows it, or nil when zero.
func shownDuration(d time.Duration) any {
	if d == 0 {
		return nil
	}
	return d.String()
}

// marshalOrNull is json.Marshal of v, or null when it fails. The shapes
// most fields have skip reflection: a batch create shows a thousand
// events' fields a request.
func marshalOrNull(v any) json.RawMessage {
	switch x := v.(type) {
	case nil:
		return json.RawMessage("null")
	case string:
		return quoteJSON(x)
	case *string:
		if x == nil {
			return json.RawMessage("null")
		}
		return quoteJSON(*x)
	case []string:
		if x == nil {
			return json.RawMessage("null")
		}
		b := append(make([]byte, 0, 2+16*len(x)), '[')
		for i, s := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, quoteJSON(s)...)
		}
		return append(b, ']')
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// canonicalField compares a client's JSON document by its meaning (member
// order and spacing aside) and shows it canonically; null when empty.
func canonicalField(raw json.RawMessage) diffField {
	v, ok := redact.DecodeDocument(raw)
	if !ok {
		return diffField{cmp: json.RawMessage("null"), show: json.RawMessage("null")}
	}
	b := marshalOrNull(v)
	return diffField{cmp: b, show: b}
}

// actionField compares the action as stored and shows it as answers do
// (redact). Params that are not JSON (never stored: they are validated) show
// as a fingerprint whole.
func actionField(r *redact.Redactor, a model.Action, withCmp bool) diffField {
	if a.Type == "" && len(a.Params) == 0 {
		return diffField{cmp: json.RawMessage("null"), show: json.RawMessage("null")}
	}
	params, ok := redact.DecodeDocument(a.Params)
	var shown any
	switch {
	case ok:
		shown = r.Document(params)
	case len(bytes.TrimSpace(a.Params)) > 0 && !bytes.Equal(bytes.TrimSpace(a.Params), []byte("null")):
		shown = r.Fingerprint(string(a.Params))
	}
	type action struct {
		Type   string `json:"type"`
		Params any    `json:"params"`
	}
	show := marshalOrNull(action{a.Type, shown})
	if !withCmp {
		return diffField{cmp: show, show: show}
	}
	return diffField{cmp: marshalOrNull(action{a.Type, params}), show: show}
}

// occurrenceState is what a history entry shows of one occurrence.
type occurrenceState struct {
	ID                  string                 `json:"id"`
	ScheduledAt         time.Time              `json:"scheduled_at"`
	Status              model.OccurrenceStatus `json:"status"`
	Reason              string                 `json:"reason,omitempty"`
	OriginalScheduledAt *time.Time             `json:"original_scheduled_at,omitempty"`
	Manual              bool                   `json:"manual,omitempty"`
}

func occurrenceSnapshot(o *model.Occurrence) any {
	if o == nil {
		return nil
	}
	st := occurrenceState{ID: o.ID, ScheduledAt: o.ScheduledAt.UTC(), Status: o.Status,
		OriginalScheduledAt: o.OriginalScheduledAt, Manual: o.Manual}
	if o.Reason != nil {
		st.Reason = *o.Reason
	}
	return st
}

// OccurrenceChanges are the changes of an action on one occurrence of the
// event (trigger, replay, skip, unskip, move): {"occurrence": {"from": …,
// "to": …}}, each side its id, scheduled_at, status, reason,
// original_scheduled_at and manual; before nil for one created (a trigger).
// Nil when nothing shown changed.
func OccurrenceChanges(before, after *model.Occurrence) json.RawMessage {
	from, to := occurrenceSnapshot(before), occurrenceSnapshot(after)
	if bytes.Equal(marshalOrNull(from), marshalOrNull(to)) {
		return nil
	}
	return Changes(map[string]Change{"occurrence": {From: from, To: to}})
}

// exceptionState is what a history entry shows of an exception.
type exceptionState struct {
	At     time.Time  `json:"at"`
	Action string     `json:"action"`
	To     *time.Time `json:"to,omitempty"`
	Reason string     `json:"reason,omitempty"`
}

func exceptionSnapshot(ex *model.Exception) any {
	if ex == nil {
		return nil
	}
	return exceptionState{At: ex.At.UTC(), Action: ex.Action, To: ex.To, Reason: ex.Reason}
}

// ExceptionChanges are the changes of adding (before nil), replacing or
// removing (after nil) an exception: {"exception": {"from": …, "to": …}}.
// Nil when nothing shown changed.
func ExceptionChanges(before, after *model.Exception) json.RawMessage {
	from, to := exceptionSnapshot(before), exceptionSnapshot(after)
	if bytes.Equal(marshalOrNull(from), marshalOrNull(to)) {
		return nil
	}
	return Changes(map[string]Change{"exception": {From: from, To: to}})
}
