package events

import (
	"bytes"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// Redacted stands in for a secret in an event's history.
const Redacted = "[redacted]"

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
// removal. Secrets never appear: hmac_secret shows only "[redacted]" (or
// null when unset), and action params show "[redacted]" for every member
// named like a secret and every header value. Nil when nothing changed.
func Diff(before, after *model.Event) json.RawMessage {
	from, to := visibleFields(before), visibleFields(after)
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
func visibleFields(ev *model.Event) map[string]diffField {
	out := map[string]diffField{}
	if ev == nil {
		return out
	}
	plain := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			b = json.RawMessage("null")
		}
		out[name] = diffField{cmp: b, show: b}
	}
	plain("name", ev.Name)
	if ev.NoTracePropagation { // listed only when opted out: null is the default, true
		plain("trace_propagation", false)
	}
	plain("description", ev.Description)
	if !ev.StartTime.IsZero() {
		plain("start_time", ev.StartTime.UTC().Format(time.RFC3339Nano))
	} else {
		plain("start_time", nil)
	}
	plain("timezone", ev.Timezone)
	plain("rrule", ev.RRule)
	out["schedule"] = canonicalField(ev.Schedule.EchoJSON())
	plain("cron", ev.Cron)
	out["action"] = actionField(ev.Action)
	out["webhook"] = diffField{cmp: marshalOrNull(ev.Webhook), show: marshalOrNull(redactURL(ev.Webhook))}
	tags := ev.Tags
	if tags == nil {
		tags = []string{}
	}
	plain("tags", tags)
	out["metadata"] = canonicalField(ev.Metadata)
	plain("retry", ev.Retry)
	plain("catch_up", ev.CatchUp)
	plain("timeout", shownDuration(time.Duration(ev.TimeoutMS)*time.Millisecond))
	plain("status", ev.Status)
	if ev.DST.IsZero() {
		plain("dst", nil)
	} else {
		plain("dst", ev.DST)
	}
	plain("jitter", shownDuration(ev.Jitter))
	calendars := ev.Calendars
	if calendars == nil {
		calendars = []model.CalendarRef{}
	}
	plain("calendars", calendars)
	if ev.PausedUntil != nil {
		plain("paused_until", ev.PausedUntil.UTC().Format(time.RFC3339Nano))
	} else {
		plain("paused_until", nil)
	}
	secret := diffField{cmp: json.RawMessage("null"), show: json.RawMessage("null")}
	if len(ev.HMACSecret) > 0 {
		// The sealed bytes decide whether it changed; only the marker shows.
		secret = diffField{cmp: marshalOrNull(ev.HMACSecret), show: marshalOrNull(Redacted)}
	}
	out["hmac_secret"] = secret
	return out
}

// shownDuration is a duration as the API shows it, or nil when zero.
func shownDuration(d time.Duration) any {
	if d == 0 {
		return nil
	}
	return d.String()
}

func marshalOrNull(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// canonicalField compares a client's JSON document by its meaning (member
// order and spacing aside) and shows it canonically; null when empty.
func canonicalField(raw json.RawMessage) diffField {
	v, ok := decodeDocument(raw)
	if !ok {
		return diffField{cmp: json.RawMessage("null"), show: json.RawMessage("null")}
	}
	b := marshalOrNull(v)
	return diffField{cmp: b, show: b}
}

// decodeDocument decodes a document keeping numbers as written; false when it
// is empty, null or not JSON.
func decodeDocument(raw json.RawMessage) (any, bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || v == nil {
		return nil, false
	}
	return v, true
}

// actionField compares the action as stored and shows it with its secrets
// redacted. Params that are not JSON (never stored: they are validated) show
// as "[redacted]" whole.
func actionField(a model.Action) diffField {
	if a.Type == "" && len(a.Params) == 0 {
		return diffField{cmp: json.RawMessage("null"), show: json.RawMessage("null")}
	}
	params, ok := decodeDocument(a.Params)
	var shown any
	switch {
	case ok:
		shown = redactSecrets(params)
	case len(bytes.TrimSpace(a.Params)) > 0 && !bytes.Equal(bytes.TrimSpace(a.Params), []byte("null")):
		shown = Redacted
	}
	type action struct {
		Type   string `json:"type"`
		Params any    `json:"params"`
	}
	return diffField{cmp: marshalOrNull(action{a.Type, params}), show: marshalOrNull(action{a.Type, shown})}
}

// secretWords mark a member whose value is a secret when its name contains
// one of them, case-insensitively ("Authorization", "api_key", "X-Token").
var secretWords = []string{"auth", "password", "passwd", "token", "secret", "credential", "key", "cookie",
	"signature", "session"}

// secretName reports whether a member's value must be redacted whole.
func secretName(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// headersName reports a member holding HTTP headers: their names show,
// their values never do.
func headersName(name string) bool { return strings.Contains(strings.ToLower(name), "header") }

// redactSecrets copies a decoded params document with every secret replaced by
// "[redacted]": members named like a secret (whole, whatever their value),
// every value of a headers object, and the password of a URL.
func redactSecrets(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			switch {
			case secretName(k):
				out[k] = Redacted
			case headersName(k):
				out[k] = redactHeaders(val)
			default:
				out[k] = redactSecrets(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = redactSecrets(val)
		}
		return out
	case string:
		return redactURL(t)
	default:
		return v
	}
}

// redactHeaders keeps header names and hides every value; headers in any
// other shape than an object hide whole.
func redactHeaders(v any) any {
	h, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return nil
		}
		return Redacted
	}
	out := make(map[string]any, len(h))
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out[k] = Redacted
	}
	return out
}

// redactURL hides the password of a URL that carries one
// ("https://user:[redacted]@host") and the values of query parameters named
// like a secret; other strings are returned as they are.
func redactURL(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	changed := false
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "REDACTED")
		changed = true
	}
	if q, err := url.ParseQuery(u.RawQuery); err == nil {
		for k := range q {
			if secretName(k) {
				q[k] = []string{"REDACTED"}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	} else if u.RawQuery != "" {
		u.RawQuery, changed = "REDACTED", true
	}
	if !changed {
		return s
	}
	return strings.ReplaceAll(u.String(), "REDACTED", Redacted)
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
