package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The event page's Backfill form against a fake API: what it sends, what it
// says after, where a refusal shows, and for which events it is offered.

func TestBackfillReadsTheRangeInTheEventsZoneAndCountsWhatItDid(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	var got capture
	tc.api.mu.Lock()
	tc.api.answers["POST /events/ev1/backfill"] = got.answer(202, `{"event_id":"ev1","from":"2029-12-01T08:00:00Z",`+
		`"to":"2029-12-29T08:00:00Z","instants":16,"created":12,"skipped":1,"existing":3}`)
	tc.api.mu.Unlock()

	res := tc.post(session, "/ui/events/ev1/backfill", url.Values{"csrf": {csrf}, "from": {"2029-12-01T09:00"},
		"to": {"2029-12-29T09:00:00"}, "respect_exceptions": {"true"}})
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	loc, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "/ui/events/ev1", loc.Path)
	require.Equal(t, "Backfill from 2029-12-01 09:00:00 +01:00 to 2029-12-29 09:00:00 +01:00: "+
		"12 created, 1 skipped, 3 already existed.", loc.Query().Get("notice"))
	b := got.last(t)
	// 09:00 in Europe/Prague (UTC+1 in December) is 08:00 UTC.
	require.Equal(t, "2029-12-01T08:00:00Z", b["from"])
	require.Equal(t, "2029-12-29T08:00:00Z", b["to"])
	require.Equal(t, true, b["respect_exceptions"])
	require.Equal(t, "Bearer "+testToken, got.auth[0], "the signed-in user's token")
	require.Equal(t, "console", got.via[0], "history records the console as the channel")

	// Unticked, the box is not sent by the browser: every instant fires.
	res = tc.post(session, "/ui/events/ev1/backfill", url.Values{"csrf": {csrf}, "from": {"2029-12-01T09:00"},
		"to": {"2029-12-29T09:00"}})
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, false, got.last(t)["respect_exceptions"])

	// A range without an instant says so rather than "0 created".
	tc.api.mu.Lock()
	tc.api.answers["POST /events/ev1/backfill"] = jsonAnswer(202, `{"event_id":"ev1","from":"2029-12-02T08:00:00Z",`+
		`"to":"2029-12-03T08:00:00Z","instants":0,"created":0,"skipped":0,"existing":0}`)
	tc.api.mu.Unlock()
	res = tc.post(session, "/ui/events/ev1/backfill", url.Values{"csrf": {csrf}, "from": {"2029-12-02T09:00"},
		"to": {"2029-12-03T09:00"}, "respect_exceptions": {"true"}})
	_ = body(t, res)
	require.Contains(t, res.Header.Get("Location"), "notice="+urlQueryEscape(
		"Backfill: the pattern has no instant from 2029-12-02 09:00:00 +01:00 to 2029-12-03 09:00:00 +01:00."))

	// Without the CSRF token nothing is sent.
	res = tc.post(session, "/ui/events/ev1/backfill", url.Values{"from": {"2029-12-01T09:00"}, "to": {"2029-12-29T09:00"}})
	_ = body(t, res)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	got.mu.Lock()
	require.Len(t, got.bodies, 2)
	got.mu.Unlock()
}

func TestBackfillRefusalsShowNextToTheirField(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()

	// A time the picker cannot have sent is refused under its field and
	// nothing is sent.
	res := tc.post(session, "/ui/events/ev1/backfill", url.Values{"csrf": {csrf}, "from": {"last week"},
		"to": {"2029-12-29T09:00"}, "respect_exceptions": {"true"}})
	page := body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Regexp(t, `id="bf-from"[^>]*value="last week"[^>]*aria-invalid="true">\s*<p class="field-error" role="alert">must be a date and time</p>`, page)
	require.False(t, tc.api.called("POST /events/ev1/backfill"))

	// The API's refusal of the range lands under To, what was typed kept
	// (the box too, unticked).
	tc.api.mu.Lock()
	tc.api.answers["POST /events/ev1/backfill"] = jsonAnswer(400,
		`{"error":"to: is in the future: a backfill fires past instants","field":"to"}`)
	tc.api.mu.Unlock()
	res = tc.post(session, "/ui/events/ev1/backfill", url.Values{"csrf": {csrf}, "from": {"2029-12-01T09:00"},
		"to": {"2031-01-01T09:00"}})
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Regexp(t, `id="bf-to"[^>]*value="2031-01-01T09:00"[^>]*aria-invalid="true">\s*<p class="field-error" role="alert">is in the future: a backfill fires past instants</p>`, page)
	require.Regexp(t, `id="bf-from"[^>]*value="2029-12-01T09:00"`, page)
	require.NotRegexp(t, `id="bf-from"[^>]*aria-invalid`, page)
	require.Regexp(t, `<input type="checkbox" id="bf-respect" name="respect_exceptions" value="true" aria-describedby="bf-respect-hint" >`, page)

	// From after To is the API's to say, under From.
	tc.api.mu.Lock()
	tc.api.answers["POST /events/ev1/backfill"] = jsonAnswer(400, `{"error":"from: is after to","field":"from"}`)
	tc.api.mu.Unlock()
	res = tc.post(session, "/ui/events/ev1/backfill", url.Values{"csrf": {csrf}, "from": {"2029-12-29T09:00"},
		"to": {"2029-12-01T09:00"}, "respect_exceptions": {"true"}})
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Regexp(t, `id="bf-from"[^>]*aria-invalid="true">\s*<p class="field-error" role="alert">is after to</p>`, page)
	require.Regexp(t, `id="bf-respect" name="respect_exceptions" value="true" aria-describedby="bf-respect-hint" checked>`, page)

	// A refusal without a field (the event was paused meanwhile) shows atop
	// the form.
	tc.api.mu.Lock()
	tc.api.answers["POST /events/ev1/backfill"] = jsonAnswer(409, `{"error":"the event is paused: resume it before a backfill"}`)
	tc.api.mu.Unlock()
	res = tc.post(session, "/ui/events/ev1/backfill", url.Values{"csrf": {csrf}, "from": {"2029-12-01T09:00"},
		"to": {"2029-12-29T09:00"}, "respect_exceptions": {"true"}})
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Regexp(t, `id="backfill-form">\s*<input type="hidden" name="csrf" value="[^"]+">\s*`+
		`<p class="field-error" role="alert">the event is paused: resume it before a backfill</p>`, page)
}

func TestBackfillIsOfferedForRecurringEventsThatAreNotPaused(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()

	page := body(t, tc.get(session, "/ui/events/ev1"))
	require.Contains(t, page, `id="backfill-form"`, "a weekly event")
	require.Regexp(t, `id="bf-from" name="from" type="datetime-local"`, page)
	require.Contains(t, page, `<label for="bf-to">To <span class="hint">in Europe/Prague; not in the future</span>`)
	require.Regexp(t, `id="bf-respect" name="respect_exceptions" value="true" aria-describedby="bf-respect-hint" checked>`, page, "checked by default")

	once := strings.Replace(sampleEvent, `"rrule":"FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0"`, `"rrule":null`, 1)
	tc.api.mu.Lock()
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, once)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/events/ev1"))
	require.Contains(t, page, `id="pause-form"`)
	require.NotContains(t, page, `id="backfill"`, "a one-time event has no pattern to backfill")

	paused := strings.Replace(sampleEvent, `"status":"active"`, `"status":"paused"`, 1)
	tc.api.mu.Lock()
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, paused)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/events/ev1"))
	require.Contains(t, page, `id="backfill-paused"`)
	require.Contains(t, page, "Resume the event to backfill it")
	require.NotContains(t, page, `id="backfill-form"`)

	// A recurring event whose series ended can still be backfilled.
	ended := strings.Replace(sampleEvent, `"status":"active"`, `"status":"inactive"`, 1)
	tc.api.mu.Lock()
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, ended)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/events/ev1"))
	require.Contains(t, page, `id="backfill-form"`)
}

func TestBackfilledOccurrencesShowTheirReason(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()
	backfilled := `{"id":"oc1","event_id":"ev1","scheduled_at":"2021-12-30T08:00:00Z","status":"pending",` +
		`"reason":"backfill","attempt_count":0,"next_attempt_at":"2022-01-05T10:00:00Z"}`
	tc.api.mu.Lock()
	tc.api.answers["GET /events/ev1/occurrences"] = jsonAnswer(200, "["+backfilled+"]")
	tc.api.answers["GET /occurrences/oc1"] = jsonAnswer(200, backfilled)
	tc.api.answers["GET /occurrences/oc1/attempts"] = jsonAnswer(200, `[]`)
	tc.api.mu.Unlock()

	page := body(t, tc.get(session, "/ui/events/ev1"))
	require.Regexp(t, `<span class="badge">pending</span> <span class="tag">backfill</span>`, page)
	res := tc.get(session, "/ui/occurrences/oc1")
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `<dd id="reason"><span class="tag">backfill</span></dd>`)
	require.NotContains(t, page, `id="skip"`, "a past instant is not offered a skip")
}
