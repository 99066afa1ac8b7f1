package events_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/redact"
)

var t0 = time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)

func baseEvent() *model.Event {
	rule := "FREQ=DAILY"
	return &model.Event{
		ID: "e1", Name: "report", StartTime: t0, Timezone: "UTC", RRule: &rule,
		Action: model.Action{Type: "webhook", Params: json.RawMessage(`{"url":"https://example.com/h"}`)},
		Tags:   []string{"a"}, Metadata: json.RawMessage(`{"b": 2, "a": 1}`), CatchUp: "all",
		Status: model.EventActive, Version: 3, CreatedAt: t0, UpdatedAt: t0,
	}
}

func ptr[T any](v T) *T { return &v }

var testRedactor = redact.New([]byte("diff-test-key"))

// fp is the fingerprint history shows for v.
func fp(v string) string { return testRedactor.Fingerprint(v) }

func TestDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(e *model.Event)
		want string // the changes, or "" for none
	}{
		{"nothing", func(*model.Event) {}, ""},
		{"bookkeeping is not a change", func(e *model.Event) {
			e.Version, e.UpdatedAt, e.NextRunAt, e.LastStatus = 9, t0.Add(time.Hour), ptr(t0), "ok"
		}, ""},
		{"metadata spacing and member order are not a change", func(e *model.Event) {
			e.Metadata = json.RawMessage(`{"a":1,"b":2}`)
		}, ""},
		{"name", func(e *model.Event) { e.Name = "daily report" },
			`{"name":{"from":"report","to":"daily report"}}`},
		{"schedule members", func(e *model.Event) {
			e.RRule, e.Cron, e.Timezone = nil, ptr("0 9 * * *"), "Europe/Prague"
		}, `{"rrule":{"from":"FREQ=DAILY","to":null},"cron":{"from":null,"to":"0 9 * * *"},
			"timezone":{"from":"UTC","to":"Europe/Prague"}}`},
		{"start time", func(e *model.Event) { e.StartTime = t0.Add(90 * time.Minute) },
			`{"start_time":{"from":"2031-03-04T10:00:00Z","to":"2031-03-04T11:30:00Z"}}`},
		{"retry, timeout, jitter", func(e *model.Event) {
			e.Retry = &model.Retry{MaxAttempts: ptr(3), InitialBackoff: "10s"}
			e.TimeoutMS, e.Jitter = 5000, 30*time.Second
		}, `{"retry":{"from":null,"to":{"max_attempts":3,"initial_backoff":"10s"}},
			"timeout":{"from":null,"to":"5s"},"jitter":{"from":null,"to":"30s"}}`},
		{"tags and status", func(e *model.Event) {
			e.Tags, e.Status = []string{}, model.EventPaused
		}, `{"tags":{"from":["a"],"to":[]},"status":{"from":"active","to":"paused"}}`},
		{"time policy and calendars", func(e *model.Event) {
			e.DST = model.DST{Gap: "skip"}
			e.Calendars = []model.CalendarRef{{ID: "c1", Policy: model.CalendarSkip}}
			e.PausedUntil = ptr(t0.Add(24 * time.Hour))
		}, `{"dst":{"from":null,"to":{"gap":"skip"}},"calendars":{"from":[],"to":[{"id":"c1","policy":"skip"}]},
			"paused_until":{"from":null,"to":"2031-03-05T10:00:00Z"}}`},
		{"metadata and description", func(e *model.Event) {
			e.Metadata, e.Description = json.RawMessage(`{"a":1.50}`), "d"
		}, `{"metadata":{"from":{"a":1,"b":2},"to":{"a":1.50}},"description":{"from":"","to":"d"}}`},
		{"secret set", func(e *model.Event) { e.HMACSecret = []byte("sealed-1") },
			`{"hmac_secret":{"from":null,"to":"` + fp("sealed-1") + `"}}`},
		{"action params, secrets redacted", func(e *model.Event) {
			e.Action.Params = json.RawMessage(`{"url":"https://example.com/h","headers":{"Authorization":"Bearer abc","X-Tenant":"acme"},"Token":"t0k"}`)
		}, `{"action":{"from":{"type":"webhook","params":{"url":"https://example.com/h"}},
			"to":{"type":"webhook","params":{"url":"https://example.com/h","headers":{"Authorization":"` + fp("Bearer abc") +
			`","X-Tenant":"` + fp("acme") + `"},"Token":"` + fp("t0k") + `"}}}}`},
		{"url password and secret query", func(e *model.Event) {
			e.Webhook = "https://bob:hunter2@example.com/h?api_key=k3y&x=1"
		}, `{"webhook":{"from":"","to":"https://` + fp("bob:hunter2") + `@example.com/h?api_key=` + fp("k3y") + `&x=` + fp("1") + `"}}`},
		{"url user without password, signed query, form body, credential members", func(e *model.Event) {
			e.Action = model.Action{Type: "apicall", Params: json.RawMessage(`{"url":"https://bob@example.com/h?sig=s1g&code=c0de",
				"body":{"deep":[{"Bearer":"b34r","pin":1234,"private":{"k":"v"}}],"name":"n"},"form":"client_secret=s3cr3t&pw=x"}`)}
		}, `{"action":{"from":{"type":"webhook","params":{"url":"https://example.com/h"}},"to":{"type":"apicall","params":{
			"url":"https://` + fp("bob") + `@example.com/h?sig=` + fp("s1g") + `&code=` + fp("c0de") + `",
			"body":{"deep":[{"Bearer":"` + fp("b34r") + `","pin":"` + fp("1234") + `","private":"` + fp(`{"k":"v"}`) + `"}],"name":"n"},
			"form":"` + fp("client_secret=s3cr3t&pw=x") + `"}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before, after := baseEvent(), baseEvent()
			tt.edit(after)
			got := events.Diff(testRedactor, before, after)
			if tt.want == "" {
				if got != nil {
					t.Fatalf("Diff: got %s, want nil", got)
				}
				return
			}
			require.JSONEq(t, tt.want, string(got))
		})
	}
}

// The sealed secret changes on every write of a secret: the diff says it
// changed and never shows a byte of it.
func TestDiffSecretRotationShowsOnlyTheMarker(t *testing.T) {
	t.Parallel()
	before, after := baseEvent(), baseEvent()
	before.HMACSecret, after.HMACSecret = []byte("sealed-old"), []byte("sealed-new")
	got := events.Diff(testRedactor, before, after)
	require.JSONEq(t, `{"hmac_secret":{"from":"`+fp("sealed-old")+`","to":"`+fp("sealed-new")+`"}}`, string(got))
	after.HMACSecret = []byte("sealed-old")
	require.Nil(t, events.Diff(testRedactor, before, after), "same sealed bytes: no change")
}

func TestDiffCreationAndRemoval(t *testing.T) {
	t.Parallel()
	ev := baseEvent()
	ev.HMACSecret = []byte("sealed")
	ev.Action.Params = json.RawMessage(`{"url":"https://example.com/h","password":"p4ss"}`)
	want := `{"name":{"from":null,"to":"report"},"start_time":{"from":null,"to":"2031-03-04T10:00:00Z"},
		"timezone":{"from":null,"to":"UTC"},"rrule":{"from":null,"to":"FREQ=DAILY"},
		"action":{"from":null,"to":{"type":"webhook","params":{"url":"https://example.com/h","password":"` + fp("p4ss") + `"}}},
		"tags":{"from":null,"to":["a"]},"metadata":{"from":null,"to":{"a":1,"b":2}},"catch_up":{"from":null,"to":"all"},
		"status":{"from":null,"to":"active"},"hmac_secret":{"from":null,"to":"` + fp("sealed") + `"}}`
	require.JSONEq(t, want, string(events.Diff(testRedactor, nil, ev)), "a creation lists what it sets, from null")
	var removal map[string]events.Change
	require.NoError(t, json.Unmarshal(events.Diff(testRedactor, ev, nil), &removal))
	require.Equal(t, events.Change{From: "report", To: nil}, removal["name"])
	require.Equal(t, events.Change{From: fp("sealed"), To: nil}, removal["hmac_secret"])
	require.Nil(t, events.Diff(testRedactor, nil, nil))
}

func TestOccurrenceAndExceptionChanges(t *testing.T) {
	t.Parallel()
	reason := "manual"
	pending := model.Occurrence{ID: "o1", ScheduledAt: t0, Status: model.OccurrencePending}
	skipped := pending
	skipped.Status, skipped.Reason = model.OccurrenceSkipped, &reason
	moved := pending
	moved.ScheduledAt, moved.OriginalScheduledAt = t0.Add(time.Hour), ptr(t0)
	tests := []struct {
		name          string
		before, after *model.Occurrence
		want          string
	}{
		{"trigger", nil, &model.Occurrence{ID: "o2", ScheduledAt: t0, Status: model.OccurrencePending, Manual: true},
			`{"occurrence":{"from":null,"to":{"id":"o2","scheduled_at":"2031-03-04T10:00:00Z","status":"pending","manual":true}}}`},
		{"skip", &pending, &skipped,
			`{"occurrence":{"from":{"id":"o1","scheduled_at":"2031-03-04T10:00:00Z","status":"pending"},
				"to":{"id":"o1","scheduled_at":"2031-03-04T10:00:00Z","status":"skipped","reason":"manual"}}}`},
		{"move", &pending, &moved,
			`{"occurrence":{"from":{"id":"o1","scheduled_at":"2031-03-04T10:00:00Z","status":"pending"},
				"to":{"id":"o1","scheduled_at":"2031-03-04T11:00:00Z","status":"pending","original_scheduled_at":"2031-03-04T10:00:00Z"}}}`},
		{"no change", &pending, &pending, ""},
	}
	for _, tt := range tests {
		got := events.OccurrenceChanges(tt.before, tt.after)
		if tt.want == "" {
			require.Nil(t, got, tt.name)
			continue
		}
		require.JSONEq(t, tt.want, string(got), tt.name)
	}
	ex := model.Exception{EventID: "e1", At: t0, Action: model.ExceptionMove, To: ptr(t0.Add(time.Hour)),
		Reason: "holiday", CreatedBy: "ops", CreatedAt: t0}
	require.JSONEq(t, `{"exception":{"from":null,"to":{"at":"2031-03-04T10:00:00Z","action":"move",
		"to":"2031-03-04T11:00:00Z","reason":"holiday"}}}`, string(events.ExceptionChanges(nil, &ex)))
	require.JSONEq(t, `{"exception":{"from":{"at":"2031-03-04T10:00:00Z","action":"move",
		"to":"2031-03-04T11:00:00Z","reason":"holiday"},"to":null}}`, string(events.ExceptionChanges(&ex, nil)))
}

// secretMarker is planted under secret-named members; it must never come out.
const secretMarker = "zq-planted-secret-9f27"

// plant adds, to every object of v (and to v itself when it is not one),
// a member named like a secret and a headers object, both holding the
// marker; nested values are planted too.
func plant(v any, name string, depth int) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range t {
			out[k] = plant(val, name, depth+1)
		}
		out[name] = secretMarker
		out["Headers"] = map[string]any{"X-Anything": secretMarker}
		if depth == 0 {
			// A secret-named member whose value is a document, not a string.
			out[name+"_doc"] = map[string]any{"inner": []any{secretMarker}}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = plant(val, name, depth+1)
		}
		return out
	default:
		if depth == 0 {
			return map[string]any{"value": v, name: secretMarker}
		}
		return v
	}
}

// secretName builds a member name that contains a secret word in mixed
// case, between arbitrary text.
func secretName(prefix, suffix string, word, caseBits uint8) string {
	words := []string{"headers", "auth", "password", "token", "secret", "authorization"}
	w := []byte(words[int(word)%len(words)])
	for i := range w {
		if caseBits&(1<<(i%8)) != 0 {
			w[i] = byte(strings.ToUpper(string(w[i]))[0])
		}
	}
	return prefix + string(w) + suffix
}

func FuzzDiffNeverLeaksMarkedSecrets(f *testing.F) {
	f.Add([]byte(`{"url":"https://example.com/h"}`), "X-", "", uint8(1), uint8(0b1010))
	f.Add([]byte(`{"headers":{"a":"b"},"body":{"list":[1,{"k":"v"}]}}`), "", "_value", uint8(5), uint8(0xff))
	f.Add([]byte(`[1,"two",null,{"x":{}}]`), "my", "", uint8(2), uint8(0))
	f.Add([]byte(`"just a string"`), "", "", uint8(3), uint8(7))
	f.Fuzz(func(t *testing.T, params []byte, prefix, suffix string, word, caseBits uint8) {
		if strings.Contains(string(params)+prefix+suffix, secretMarker) || !json.Valid(params) {
			return
		}
		var doc any
		if err := json.Unmarshal(params, &doc); err != nil {
			return
		}
		name := secretName(prefix, suffix, word, caseBits)
		planted, err := json.Marshal(plant(doc, name, 0))
		if err != nil {
			return
		}
		before, after := baseEvent(), baseEvent()
		after.Action.Params = planted
		after.HMACSecret = []byte(secretMarker)
		for _, got := range []json.RawMessage{events.Diff(testRedactor, before, after), events.Diff(testRedactor, after, before),
			events.Diff(testRedactor, nil, after), events.Diff(testRedactor, after, nil)} {
			if !json.Valid(got) {
				t.Fatalf("changes are not JSON: %s", got)
			}
			if strings.Contains(string(got), secretMarker) {
				t.Fatalf("a secret under %q leaked: %s", name, got)
			}
		}
	})
}

// TestCreatedIsTheCreationDiff: the creation's changes built directly are
// Diff(nil, ev) byte for byte, whatever the event sets (history entries of
// a batch create and of single creates must not differ).
func TestCreatedIsTheCreationDiff(t *testing.T) {
	t.Parallel()
	paused := t0.Add(90 * time.Minute)
	cases := map[string]func(ev *model.Event){
		"base":   func(*model.Event) {},
		"empty":  func(ev *model.Event) { *ev = model.Event{} },
		"secret": func(ev *model.Event) { ev.HMACSecret = []byte("sealed") },
		"everything": func(ev *model.Event) {
			ev.RRule, ev.Cron = nil, ptr("*/5 * * * *")
			ev.Name, ev.Description = `<b>"quoted" & \ é`+"\u2028\x7f\x01", "line\nbreak"
			ev.Webhook = "https://user:pw@example.com/hook?token=abc"
			ev.Action.Params = json.RawMessage(`{"url":"https://example.com/h","password":"p4ss"}`)
			ev.Tags, ev.Metadata = nil, json.RawMessage(`null`)
			ev.Retry = &model.Retry{}
			ev.TimeoutMS, ev.Jitter = 2500, 3*time.Second
			ev.NoTracePropagation = true
			ev.Status, ev.PausedUntil = model.EventPaused, &paused
			ev.Calendars = []model.CalendarRef{{}}
			ev.Schedule = &model.Schedule{}
		},
		"no action":  func(ev *model.Event) { ev.Action = model.Action{}; ev.StartTime = time.Time{} },
		"bad params": func(ev *model.Event) { ev.Action.Params = json.RawMessage(`not json`) },
	}
	for name, edit := range cases {
		ev := baseEvent()
		edit(ev)
		require.Equal(t, string(events.Diff(testRedactor, nil, ev)), string(events.Created(testRedactor, ev)), name)
	}
}
