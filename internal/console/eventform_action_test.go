package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A broker event is made and edited from the form as the CLI's --publish
// and --to make it: the destination read per broker, JetStream and the
// Kafka record key, and a receiver's public key to encrypt to.
func TestFormMakesBrokerEvents(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	var created capture
	tc.api.mu.Lock()
	tc.api.answers["POST /events"] = created.answer(201, sampleEvent)
	tc.api.mu.Unlock()
	base := url.Values{"csrf": {csrf}, "name": {"billing run"}, "start_time": {"tomorrow at 9am"},
		"rule_kind": {"once"}, "target_kind": {"url"}}
	post := func(change url.Values) (int, string) {
		form := url.Values{}
		for k, v := range base {
			form[k] = v
		}
		for k, v := range change {
			form[k] = v
		}
		res := tc.post(session, "/ui/events/new", form)
		return res.StatusCode, body(t, res)
	}
	jwk := `{"kty":"OKP","crv":"X25519","x":"hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"}`
	cases := []struct {
		form   url.Values
		params map[string]any
	}{
		{url.Values{"action_type": {"nats"}, "target": {"nats://nats.example.com:4222"}, "to": {"billing.run"},
			"jetstream": {"1"}},
			map[string]any{"url": "nats://nats.example.com:4222", "subject": "billing.run", "jetstream": true}},
		{url.Values{"action_type": {"amqp"}, "target": {"amqp://mq.example.com/"}, "to": {"reminders:cart.abandoned"}},
			map[string]any{"url": "amqp://mq.example.com/", "exchange": "reminders", "routing_key": "cart.abandoned"}},
		{url.Values{"action_type": {"kafka"}, "target": {"kafka://kafka.example.com:9092"}, "to": {"orders"},
			"record_key": {"customer-42"}, "encryption_jwk": {jwk}},
			map[string]any{"url": "kafka://kafka.example.com:9092", "topic": "orders", "key": "customer-42",
				"encryption_jwk": map[string]any{"kty": "OKP", "crv": "X25519", "x": "hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"}}},
		{url.Values{"action_type": {"redis_stream"}, "target_kind": {"endpoint"}, "endpoint_id": {"ep9"}, "to": {"jobs"}},
			map[string]any{"endpoint_id": "ep9", "stream": "jobs"}},
	}
	for _, c := range cases {
		status, page := post(c.form)
		require.Equal(t, http.StatusSeeOther, status, "%v: %s", c.form, page)
		action := created.last(t)["action"].(map[string]any)
		require.Equal(t, c.form.Get("action_type"), action["type"])
		require.Equal(t, c.params, action["params"])
	}

	// What the form refuses itself names the field; nothing reaches the API.
	calls := len(created.bodies)
	status, page := post(url.Values{"action_type": {"nats"}, "target": {"nats://nats.example.com:4222"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, page, "is required for a broker: the subject")
	status, page = post(url.Values{"action_type": {"amqp"}, "target": {"amqp://mq.example.com/"}, "to": {"no-colon"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, page, "must be exchange:routing_key")
	status, page = post(url.Values{"action_type": {"webhook"}, "target": {"https://example.com/h"}, "encryption_jwk": {"{nope"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, page, "must be a JWK")
	require.Len(t, created.bodies, calls)

	// The API's refusal of a broker param shows next to "Publish to".
	tc.api.mu.Lock()
	tc.api.answers["POST /events"] = jsonAnswer(400, `{"error":"action.params.subject: must not contain spaces","field":"action.params.subject"}`)
	tc.api.mu.Unlock()
	status, page = post(url.Values{"action_type": {"nats"}, "target": {"nats://nats.example.com:4222"}, "to": {"a b"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, page, `id="f-to" name="to" value="a b" aria-invalid="true"`)
}

// Saving an edit keeps the action params the form does not show — a
// webhook's headers (as the fingerprints the API showed, which it puts
// back), a WebSocket event's require_ack — and the encryption key it
// shows; a changed type starts from the form's params alone.
func TestEditKeepsTheParamsTheFormDoesNotShow(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	stored := strings.Replace(sampleEvent, `"action":{"type":"webhook","params":{"url":"https://example.com/hook"}}`,
		`"action":{"type":"webhook","params":{"url":"https://example.com/hook","headers":{"Authorization":"••••ab12cd34"},`+
			`"encryption_jwk":{"kty":"OKP","crv":"X25519","x":"hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"}}}`, 1)
	require.NotEqual(t, sampleEvent, stored)
	var saved capture
	tc.api.mu.Lock()
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, stored)
	tc.api.answers["PUT /events/ev1"] = saved.answer(200, stored)
	tc.api.mu.Unlock()

	res := tc.get(session, "/ui/events/ev1/edit")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, page, `hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo`, "the public key is shown to edit")
	require.NotContains(t, page, "ab12cd34", "headers are not on the form")

	form := url.Values{"csrf": {csrf}, "name": {"weekly report, renamed"}, "start_time": {"2030-01-06T09:00:00+01:00"},
		"timezone": {"Europe/Prague"}, "rule_kind": {"rrule"}, "orig_kind": {"rrule"}, "rule": {"FREQ=WEEKLY;BYDAY=MO"},
		"action_type": {"webhook"}, "target_kind": {"url"}, "target": {"https://example.com/hook"},
		"encryption_jwk": {`{"kty":"OKP","crv":"X25519","x":"hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"}`}}
	res = tc.post(session, "/ui/events/ev1/edit", form)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	params := saved.last(t)["action"].(map[string]any)["params"].(map[string]any)
	require.Equal(t, map[string]any{"Authorization": "••••ab12cd34"}, params["headers"], "kept as the API showed them")
	require.Equal(t, "X25519", params["encryption_jwk"].(map[string]any)["crv"])

	// Cleared on the form, the encryption goes; the headers stay.
	form.Set("encryption_jwk", "")
	res = tc.post(session, "/ui/events/ev1/edit", form)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	params = saved.last(t)["action"].(map[string]any)["params"].(map[string]any)
	require.NotContains(t, params, "encryption_jwk")
	require.Contains(t, params, "headers")

	// Another type: only what the form sets.
	form.Set("action_type", "nats")
	form.Set("target", "nats://nats.example.com:4222")
	form.Set("to", "reports.weekly")
	res = tc.post(session, "/ui/events/ev1/edit", form)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, map[string]any{"type": "nats", "params": map[string]any{"url": "nats://nats.example.com:4222",
		"subject": "reports.weekly"}}, saved.last(t)["action"])
}
