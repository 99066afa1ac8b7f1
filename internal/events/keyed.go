package events

import (
	"encoding/json"
	"time"

	"github.com/qhronos/qhronos/internal/input"
)

// Key limits: a key names an event in URLs and logs, so it is short and
// made of characters that need no escaping in a path segment.
const (
	MaxKeyLength = 200
	// MaxDebounce bounds debounce and max_wait: an event pushed further than
	// that is a schedule, not a debounce.
	MaxDebounce = 366 * 24 * time.Hour
	minDebounce = time.Second
)

// CheckKey applies the rules of an event key: 1 to 200 characters of
// A-Z a-z 0-9 and . _ : @ -.
func CheckKey(key string) error { return checkKey("key", key) }

// checkKey applies the rules of an event key to a key named by field (a
// concurrency key follows them too: both go into URL paths as they are).
func checkKey(field, key string) error {
	if key == "" || len(key) > MaxKeyLength {
		return input.BadRequestf(field, "must be 1 to %d characters", MaxKeyLength)
	}
	if key == "." || key == ".." {
		// A URL path cannot name them (/events/by-key/.. is /events).
		return input.BadRequest(field, `must not be "." or ".."`)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.' || c == '_' || c == ':' || c == '@' || c == '-':
		default:
			return input.BadRequest(field, "may hold only letters, digits and . _ : @ -")
		}
	}
	return nil
}

// Debounce is the debounce of an upsert by key: each upsert moves the
// event's one pending occurrence to Window after it, but never past MaxWait
// after the first upsert of the burst (0: no bound).
type Debounce struct {
	Window, MaxWait time.Duration
}

// DecodeDebounce takes the debounce and max_wait members out of an upsert
// body (the other members are an event's, decoded by DecodeInput) and
// checks them: durations from 1s to 366 days, max_wait only with debounce
// and not below it. A debounced event fires once per burst, so its body
// names no start_time and no recurrence.
func DecodeDebounce(members map[string]json.RawMessage) (Debounce, error) {
	var d Debounce
	for _, f := range []struct {
		name string
		dst  *time.Duration
	}{{"debounce", &d.Window}, {"max_wait", &d.MaxWait}} {
		raw, ok := members[f.name]
		delete(members, f.name)
		if !ok || input.IsNull(raw) {
			continue
		}
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return Debounce{}, input.BadRequestf(f.name, "must be a duration string such as \"10m\"")
		}
		v, err := input.ParseDuration(f.name, text, minDebounce, MaxDebounce)
		if err != nil {
			return Debounce{}, err
		}
		*f.dst = v
	}
	if d.MaxWait > 0 && d.Window == 0 {
		return Debounce{}, input.BadRequest("max_wait", "needs debounce")
	}
	if d.MaxWait > 0 && d.MaxWait < d.Window {
		return Debounce{}, input.BadRequest("max_wait", "must not be shorter than debounce")
	}
	if d.Window == 0 {
		return d, nil
	}
	if sent, null := isSent(members, "start_time"); sent && !null {
		return Debounce{}, input.BadRequest("start_time", "must be absent with debounce (each upsert sets when it fires)")
	}
	for _, f := range []string{"rrule", "schedule", "cron"} {
		if sent, null := isSent(members, f); sent && !null {
			return Debounce{}, input.BadRequestf(f, "must be absent with debounce (a debounced event fires once)")
		}
	}
	return d, nil
}

func isSent(members map[string]json.RawMessage, name string) (sent, null bool) {
	raw, ok := members[name]
	if !ok {
		return false, false
	}
	return true, input.IsNull(raw)
}

// FireAt is when a debounced event upserted at now fires, and when its burst
// began: a burst continues while the event still has its occurrence ahead
// (pending is its next run, nil or past when none), else one begins now.
func (d Debounce) FireAt(since, pending *time.Time, now time.Time) (fire, burst time.Time) {
	burst = now
	if since != nil && pending != nil && pending.After(now) {
		burst = *since
	}
	fire = now.Add(d.Window)
	if d.MaxWait > 0 && burst.Add(d.MaxWait).Before(fire) {
		fire = burst.Add(d.MaxWait)
	}
	return fire, burst
}

// KeepsKey refuses a key member that is not the event's own key (stored,
// "" for an event without one); absent, it says nothing. Only PUT
// /events/by-key/{key} gives an event its key, and a key never changes.
// POST /events, POST /events/batch and PUT /events/{id} used to ignore a
// key in the body, so a client counting on it for deduplication created a
// duplicate on each retry; a 400 naming key sends it to the route that
// dedupes. Honouring it on POST instead would make a second keyed create
// beside the upsert, with its own answer to "the key exists" — one route
// with one set of rules is easier to get right. The event's own key (as
// GET shows it, null when none) is accepted, so GET → edit → PUT round
// trips keep working.
func (in *Input) KeepsKey(stored string) error {
	if !in.keySent {
		return nil
	}
	sent := ""
	if !input.IsNull(in.key) {
		if err := json.Unmarshal(in.key, &sent); err != nil {
			return input.BadRequest("key", "must be a string")
		}
	}
	switch {
	case sent == stored:
		return nil
	case stored == "":
		return input.BadRequest("key", "is set only by PUT /events/by-key/{key}, which creates the event or "+
			"replaces the one holding the key; this route would ignore it, and a repeated create would duplicate the event")
	default:
		return input.BadRequestf("key", "must be the event's key %q or left out: a key never changes", stored)
	}
}
