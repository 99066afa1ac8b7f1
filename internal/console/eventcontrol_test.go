package console

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
)

// capture answers one route with status and body and keeps what the
// console sent it.
type capture struct {
	mu     sync.Mutex
	bodies []map[string]any
	auth   []string
	via    []string
}

func (c *capture) answer(status int, reply string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		c.mu.Lock()
		c.bodies = append(c.bodies, m)
		c.auth = append(c.auth, r.Header.Get("Authorization"))
		c.via = append(c.via, r.Header.Get("X-Qhronos-Via"))
		c.mu.Unlock()
		jsonAnswer(status, reply)(w, r)
	}
}

func (c *capture) last(t *testing.T) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	require.NotEmpty(t, c.bodies, "the API was not called")
	return c.bodies[len(c.bodies)-1]
}

func TestPauseUntilIsReadInTheEventsZoneAndSentThroughTheSDK(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	var got capture
	tc.api.mu.Lock()
	tc.api.answers["POST /events/ev1/pause"] = got.answer(200, sampleEvent)
	tc.api.mu.Unlock()
	res := tc.post(session, "/ui/events/ev1/pause", url.Values{"csrf": {csrf}, "until": {"2030-01-13T00:00"},
		"reason": {"quarter-end freeze"}, "catch_up": {"skip"}})
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Contains(t, res.Header.Get("Location"), "notice=Event+paused+until")
	b := got.last(t)
	// Midnight in Europe/Prague (UTC+1 in January) is 23:00 UTC the day before.
	require.Equal(t, "2030-01-12T23:00:00Z", b["until"])
	require.Equal(t, "quarter-end freeze", b["reason"])
	require.Equal(t, "skip", b["catch_up"])
	require.Equal(t, "Bearer "+testToken, got.auth[0], "the signed-in user's token")
	require.Equal(t, "console", got.via[0], "history records the console as the channel")
}

func TestControlErrorsShowNextToTheirField(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()

	// Words the API cannot read as a time are refused under the field, as
	// the API words it, and the pause is not sent.
	tc.api.mu.Lock()
	tc.api.answers["POST /schedules/preview"] = jsonAnswer(400,
		`{"error":"start_time: cannot read \"whenever\" as a time","field":"start_time"}`)
	tc.api.mu.Unlock()
	res := tc.post(session, "/ui/events/ev1/pause", url.Values{"csrf": {csrf}, "until": {"whenever"}})
	page := body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Regexp(t, `id="p-until"[^>]*value="whenever"[^>]*aria-invalid="true"`, page)
	require.Contains(t, page, "cannot read &#34;whenever&#34; as a time")
	require.False(t, tc.api.called("POST /events/ev1/pause"))

	// The API's refusal of a move lands next to the new-time picker, with
	// what was typed kept.
	var got capture
	tc.api.mu.Lock()
	tc.api.answers["POST /events/ev1/exceptions"] = got.answer(400, `{"error":"to: must be in the future","field":"to"}`)
	tc.api.mu.Unlock()
	res = tc.post(session, "/ui/events/ev1/exceptions", url.Values{"csrf": {csrf}, "at": {"2030-01-06T08:00:00Z"},
		"action": {"move"}, "to": {"2020-01-01T10:00:30"}, "reason": {"launch"}})
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Regexp(t, `id="x-to"[^>]*value="2020-01-01T10:00:30"[^>]*aria-invalid="true"`, page)
	require.Regexp(t, `aria-invalid="true">\s*<p class="field-error" role="alert">must be in the future</p>`, page)
	b := got.last(t)
	require.Equal(t, "2030-01-06T08:00:00Z", b["at"])
	require.Equal(t, "move", b["action"])
	require.Equal(t, "2020-01-01T09:00:30Z", b["to"], "the picker's time read in Europe/Prague")
	require.Equal(t, "launch", b["reason"])
}

func TestRemoveExceptionAndResume(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	var resumed capture
	tc.api.mu.Lock()
	tc.api.answers["DELETE /events/ev1/exceptions/2030-01-06T08:00:00Z"] = jsonAnswer(204, "")
	tc.api.answers["POST /events/ev1/resume"] = resumed.answer(200, sampleEvent)
	tc.api.mu.Unlock()
	res := tc.post(session, "/ui/events/ev1/exceptions/remove", url.Values{"csrf": {csrf}, "at": {"2030-01-06T08:00:00Z"}})
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.True(t, tc.api.called("DELETE /events/ev1/exceptions/2030-01-06T08:00:00Z"))
	res = tc.post(session, "/ui/events/ev1/resume", url.Values{"csrf": {csrf}, "catch_up": {"fire"}})
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "fire", resumed.last(t)["catch_up"])
	// Without the CSRF token nothing is sent.
	res = tc.post(session, "/ui/events/ev1/resume", url.Values{"catch_up": {"fire"}})
	_ = body(t, res)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	resumed.mu.Lock()
	require.Len(t, resumed.bodies, 1)
	resumed.mu.Unlock()
}

func TestPausedEventPageAndHistoryTab(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()
	paused := strings.Replace(sampleEvent, `"status":"active"`, `"status":"paused","paused_until":"2030-01-20T23:00:00Z",`+
		`"pause_reason":"quarter-end freeze","paused_by":"ops-lead","paused_at":"2030-01-01T10:00:00Z","pause_catch_up":"skip"`, 1)
	preview := `{"timezone":"Europe/Prague","instants":[
{"utc":"2030-01-13T08:00:00Z","local":"2030-01-13T09:00:00+01:00"},
{"utc":"2030-01-20T08:00:00Z","local":"2030-01-20T09:00:00+01:00","skipped":true,"reason":"manual"},
{"utc":"2030-01-27T08:00:00Z","local":"2030-01-27T09:00:00+01:00"},
{"utc":"2030-02-03T10:00:00Z","local":"2030-02-03T11:00:00+01:00","original":"2030-02-03T08:00:00Z"},
{"utc":"2030-02-11T08:00:00Z","local":"2030-02-11T09:00:00+01:00","original":"2030-02-10T08:00:00Z"}]}`
	history := `{"data":[{"id":"h1","action":"update","at":"2030-01-01T09:00:00Z","subject":"master","channel":"cli",
"reason":"","changes":{"hmac_secret":{"from":"••••a1b2c3d4","to":"••••e5f6a7b8"},"name":{"from":"old","to":"weekly report"}}},
{"id":"h2","action":"pause","at":"2030-01-01T10:00:00Z","subject":"ops-lead","channel":"console","reason":"quarter-end freeze",
"changes":{"status":{"from":"active","to":"paused"}}}],"pagination":{"limit":50,"next_cursor":"c2"}}`
	tc.api.mu.Lock()
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, paused)
	tc.api.answers["GET /events/ev1/preview"] = jsonAnswer(200, preview)
	tc.api.answers["GET /events/ev1/exceptions"] = jsonAnswer(200, `{"data":[{"at":"2030-02-03T08:00:00Z","action":"move",`+
		`"to":"2030-02-03T10:00:00Z","reason":"late start","created_by":"ops-lead"}]}`)
	tc.api.answers["GET /events/ev1/history"] = jsonAnswer(200, history)
	tc.api.mu.Unlock()

	res := tc.get(session, "/ui/events/ev1")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, "quarter-end freeze")
	require.Contains(t, page, "Paused by ops-lead")
	require.Contains(t, page, "it resumes by itself then")
	// Before the pause's end: marked; after it: as planned, moved or rolled.
	require.Regexp(t, `<li class="paused" data-mark="paused"><time datetime="2030-01-13T08:00:00Z"`, page)
	require.Regexp(t, `<li class="skipped" data-mark="skipped" data-reason="manual"><time datetime="2030-01-20T08:00:00Z"`, page)
	require.Regexp(t, `<li><time datetime="2030-01-27T08:00:00Z"`, page)
	require.Regexp(t, `<li class="moved" data-mark="moved"><time datetime="2030-02-03T10:00:00Z"`, page)
	require.Regexp(t, `<li class="rolled" data-mark="rolled"><time datetime="2030-02-11T08:00:00Z"`, page)
	require.Contains(t, page, `id="resume-form"`)
	require.NotContains(t, page, `id="pause-form"`)
	// A move is addressed by its planned instant.
	require.Contains(t, page, `<option value="2030-02-03T08:00:00Z"`)

	tc.api.mu.Lock()
	before := len(tc.api.calls)
	tc.api.mu.Unlock()
	res = tc.get(session, "/ui/events/ev1?tab=history")
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `id="changes"`)
	require.Contains(t, page, "••••a1b2c3d4", "a secret shows as its fingerprint")
	require.Regexp(t, `<strong>pause</strong> by ops-lead via console`, page)
	require.Contains(t, page, "Reason: quarter-end freeze")
	require.Contains(t, page, `href="/ui/events/ev1?tab=history&amp;changes=c2"`)
	require.Contains(t, page, `id="history"`, "deliveries beside the changes")
	tc.api.mu.Lock()
	for _, call := range tc.api.calls[before:] {
		require.NotContains(t, call, "/preview", "the History tab does not plan the series")
	}
	tc.api.mu.Unlock()
}

func TestUpcomingMarks(t *testing.T) {
	t.Parallel()
	until := time.Date(2030, 1, 20, 0, 0, 0, 0, time.UTC)
	at := func(d int) time.Time { return time.Date(2030, 1, d, 8, 0, 0, 0, time.UTC) }
	p := &client.Preview{Timezone: "UTC"}
	add := func(u time.Time, skipped bool, reason string, orig *time.Time) {
		in := struct {
			Local    string     `json:"local"`
			Original *time.Time `json:"original,omitempty"`
			Reason   *string    `json:"reason,omitempty"`
			Skipped  *bool      `json:"skipped,omitempty"`
			Utc      time.Time  `json:"utc"`
		}{Utc: u, Original: orig}
		if skipped {
			in.Skipped, in.Reason = client.Ptr(true), client.Ptr(reason)
		}
		p.Instants = append(p.Instants, in)
	}
	add(at(13), false, "", nil)
	add(at(14), true, "calendar", nil)
	add(at(21), false, "", client.Ptr(at(20)))
	add(at(22), false, "", client.Ptr(at(23)))
	exceptions := []client.Exception{{At: at(23), Action: "move", To: client.Ptr(at(22))}}
	for _, tt := range []struct {
		name string
		ev   eventView
		want []string
	}{
		{"active", eventView{Status: "active", Timezone: "UTC"}, []string{"", "skipped", "rolled", "moved"}},
		{"paused until the 20th", eventView{Status: "paused", Timezone: "UTC", PausedUntil: &until},
			[]string{"paused", "skipped", "rolled", "moved"}},
		{"paused without an end", eventView{Status: "paused", Timezone: "UTC"}, []string{"paused", "skipped", "paused", "paused"}},
	} {
		rows := upcoming(tt.ev, p, exceptions)
		var got []string
		for _, r := range rows {
			got = append(got, r.Mark)
		}
		require.Equal(t, tt.want, got, tt.name)
		require.Equal(t, at(23), rows[3].Key, "%s: a moved instant is addressed by its planned time", tt.name)
		require.Equal(t, at(21), rows[2].Key, "%s: a rolled instant is addressed where it fires", tt.name)
	}
}

func TestFormOffersEndpointsAndCalendarsAndSendsThem(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	var created, previewed capture
	tc.api.mu.Lock()
	tc.api.answers["GET /endpoints"] = jsonAnswer(200, `[{"id":"ep1","name":"billing","url":"https://billing.example.com/hook",`+
		`"state":"healthy","health":{"attempts":0,"consecutive_failures":0,"since":"2030-01-01T00:00:00Z","succeeded":0},`+
		`"created_at":"2030-01-01T00:00:00Z","updated_at":"2030-01-01T00:00:00Z","state_changed_at":"2030-01-01T00:00:00Z",`+
		`"created_by":"m","description":"","disabled_reason":"","headers":{},"max_concurrency":0,"tags":[],"version":1}]`)
	tc.api.answers["GET /calendars"] = jsonAnswer(200, `[{"id":"11111111-1111-1111-1111-111111111111","name":"public holidays",`+
		`"timezone":"Europe/Prague","dates":["2030-01-01"],"ranges":[],"rrules":[],"tags":[],"created_at":"2030-01-01T00:00:00Z",`+
		`"created_by":"m","updated_at":"2030-01-01T00:00:00Z","version":1,"replan_pending":false}]`)
	tc.api.answers["POST /events"] = created.answer(201, sampleEvent)
	tc.api.answers["POST /schedules/preview"] = previewed.answer(200, `{"timezone":"Europe/Prague","instants":[`+
		`{"utc":"2030-01-02T08:00:00Z","local":"2030-01-02T09:00:00+01:00","original":"2030-01-01T08:00:00Z"}]}`)
	tc.api.mu.Unlock()

	res := tc.get(session, "/ui/events/new")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, page, `<option value="ep1" >billing · https://billing.example.com/hook (healthy)</option>`)
	require.Contains(t, page, `data-calendar="11111111-1111-1111-1111-111111111111"`)
	require.Contains(t, page, `>public holidays</label>`)

	form := url.Values{"csrf": {csrf}, "name": {"invoice run"}, "tags": {"billing"}, "timezone": {"Europe/Prague"},
		"start_time": {"tomorrow at 9am"}, "rule_kind": {"rrule"}, "rule": {"FREQ=DAILY"}, "action_type": {"webhook"},
		"target_kind": {"endpoint"}, "endpoint_id": {"ep1"}, "target": {"https://ignored.example.com"},
		"calendar_id": {"11111111-1111-1111-1111-111111111111"}, "calendar_policy": {"roll_forward"},
		"dst_gap": {"skip"}, "dst_repeat": {"both"}, "jitter": {"30s"}, "catch_up": {"all"}, "status": {"active"}}
	res = tc.post(session, "/ui/events/new", form)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	b := created.last(t)
	require.Equal(t, map[string]any{"type": "webhook", "params": map[string]any{"endpoint_id": "ep1"}}, b["action"])
	require.Equal(t, []any{map[string]any{"id": "11111111-1111-1111-1111-111111111111", "policy": "roll_forward"}}, b["calendars"])
	require.Equal(t, map[string]any{"gap": "skip", "repeat": "both"}, b["dst"])
	require.Equal(t, "30s", b["jitter"])

	// The live preview carries the same calendars, DST policy and jitter,
	// and passes on where a rolled instant was planned.
	res = tc.post(session, "/ui/preview", form, "X-CSRF-Token", csrf)
	var pv previewAnswer
	require.NoError(t, json.Unmarshal([]byte(body(t, res)), &pv))
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Len(t, pv.Instants, 1)
	require.NotNil(t, pv.Instants[0].Original)
	p := previewed.last(t)
	require.Equal(t, b["calendars"], p["calendars"])
	require.Equal(t, b["dst"], p["dst"])
	require.Equal(t, "30s", p["jitter"])
	require.NotContains(t, p, "action", "the preview sends the schedule only")
}

// Words in the pause field are read by the API (as a one-time schedule's
// start, in the event's zone): the instant it answers is the pause's end,
// and /ui/resolve-time shows that instant before the form is sent.
func TestPauseUntilInWordsIsResolvedByTheAPI(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	var previewed, paused capture
	tc.api.mu.Lock()
	tc.api.answers["POST /schedules/preview"] = previewed.answer(200,
		`{"timezone":"Europe/Prague","instants":[{"utc":"2030-01-07T08:00:00Z","local":"2030-01-07T09:00:00+01:00"}]}`)
	tc.api.answers["POST /events/ev1/pause"] = paused.answer(200, sampleEvent)
	tc.api.mu.Unlock()

	res := tc.post(session, "/ui/resolve-time", url.Values{"text": {"tomorrow 9:00"}, "timezone": {"Europe/Prague"}},
		"X-CSRF-Token", csrf)
	var shown map[string]string
	require.NoError(t, json.Unmarshal([]byte(body(t, res)), &shown))
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, map[string]string{"utc": "2030-01-07T08:00:00Z", "shown": "2030-01-07 09:00:00 +01:00"}, shown)
	require.Equal(t, map[string]any{"start_time": "tomorrow 9:00", "timezone": "Europe/Prague", "count": float64(1)},
		previewed.last(t))

	res = tc.post(session, "/ui/events/ev1/pause", url.Values{"csrf": {csrf}, "until": {"tomorrow 9:00"}})
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Contains(t, res.Header.Get("Location"), "notice="+url.QueryEscape("Event paused until 2030-01-07 09:00:00 +01:00."))
	require.Equal(t, "2030-01-07T08:00:00Z", paused.last(t)["until"])
}
