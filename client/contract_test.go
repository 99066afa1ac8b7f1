package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
)

// documentPath is the document the server serves at /openapi.json.
const documentPath = "../internal/api/openapi.json"

func loadDocument(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(documentPath)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	return doc
}

// aliases are routes the client reaches through another one.
var aliases = map[string]string{"GET /healthz": "GET /health"}

// Every operation of the document is called by some method of the client,
// and every request the client sends is valid for the document (parameters,
// headers and bodies). A route added to the document without a client
// method, or a parameter the document no longer has, fails here.
func TestEveryOperationIsCovered(t *testing.T) {
	t.Parallel()
	doc := loadDocument(t)
	router, err := gorillamux.NewRouter(doc)
	require.NoError(t, err)

	var mu sync.Mutex
	hit := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, params, err := router.FindRoute(r)
		if err != nil {
			t.Errorf("%s %s is not in the document: %v", r.Method, r.URL.Path, err)
			http.Error(w, "{}", http.StatusNotFound)
			return
		}
		op := r.Method + " " + route.Path
		mu.Lock()
		hit[op] = true
		mu.Unlock()
		in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
		if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
			t.Errorf("%s: request does not match the document: %v", op, err)
		}
		if route.Path == "/ws" {
			http.Error(w, `{"error":"not a websocket server"}`, http.StatusBadRequest)
			return
		}
		writeMinimalAnswer(w, route.Operation)
	}))
	defer srv.Close()

	c, err := client.New(srv.URL, client.WithToken("t"), client.WithRetries(0))
	require.NoError(t, err)
	ctx := context.Background()
	id := "0b7f6a43-2a35-4d43-9a47-51cbbd1d6d83"
	since := time.Now().Add(-time.Hour)
	must := func(_ any, err error) {
		t.Helper()
		require.NoError(t, err)
	}
	must(c.Health(ctx))
	must(c.Ready(ctx))
	must(c.Status(ctx))
	must(c.OpenAPI(ctx))
	must(c.Metrics(ctx))
	must(c.Stats(ctx, client.StatsParams{Since: &since}))
	must(c.StatsTimeline(ctx, client.StatsTimelineParams{Since: &since}))
	must(c.Punctuality(ctx, client.PunctualityParams{GroupBy: client.Ptr(client.GetStatsPunctualityParamsGroupByTag), Tag: []string{"a", "b"}}))
	_, err = c.Subscribe(ctx, client.Subscription{ClientName: "acme"})
	require.Error(t, err)
	must(c.Events.Create(ctx, client.EventInput{Name: client.Ptr("n"), StartTime: client.Ptr("in 1 hour"),
		Webhook: client.Ptr("https://example.com/h"), Tags: []string{"a"}, Metadata: json.RawMessage(`{"k":1}`)},
		client.Via("test")))
	// The stub answers {}: no result for the one event sent is an error.
	_, err = c.Events.CreateMany(ctx, []client.EventInput{{Name: client.Ptr("n"), StartTime: client.Ptr("in 1 hour"),
		Webhook: client.Ptr("https://example.com/h")}}, client.IdempotencyKey("k"))
	require.ErrorContains(t, err, "0 results for 1 events")
	must(c.Events.List(ctx, client.ListEventsParams{Tags: []string{"a", "b"}, TagsAll: []string{"c"},
		Status: client.Ptr("active"), From: &since, Limit: client.Ptr(10), Cursor: client.Ptr("x"),
		Topic: client.Ptr("digest.daily")}))
	must(c.Events.Get(ctx, id))
	must(c.Events.GetIncludingDeleted(ctx, id))
	must(c.Events.Update(ctx, id, client.EventInput{Description: client.Ptr("d")}, client.IfMatch(`"3"`)))
	must3 := func(ev *client.Event, _ bool, err error) { require.NoError(t, err) }
	must3(c.Events.Upsert(ctx, "cart-42", client.EventUpsertInput{Name: client.Ptr("n"), Debounce: client.Ptr("10m")}))
	require.NoError(t, c.Events.DeleteByKey(ctx, "cart-42"))
	require.NoError(t, c.Events.Delete(ctx, id, client.IfMatch(`"3"`)))
	must(c.Events.Pause(ctx, id))
	must(c.Events.Resume(ctx, id))
	must(c.Events.Trigger(ctx, id, client.IdempotencyKey("k1")))
	must(c.Events.RotateSecret(ctx, id, time.Hour))
	must(c.Events.Backfill(ctx, id, client.BackfillRequest{From: since, To: time.Now(), RespectExceptions: client.Ptr(false)}))
	must(c.Events.Occurrences(ctx, id, client.ListEventOccurrencesParams{Status: client.Ptr("completed"), Page: client.Ptr(2),
		Order: client.Ptr(client.OccurrenceOrderScheduledAt)}))
	must(c.Events.Preview(ctx, id, client.PreviewEventParams{Count: client.Ptr(3), After: &since}))
	must(c.Events.History(ctx, id, client.EventHistoryParams{IncludeDeleted: client.Ptr(true), Limit: client.Ptr(5),
		Cursor: client.Ptr("x")}))
	must(c.Schedules.Preview(ctx, client.PreviewRequest{Rrule: client.Ptr("FREQ=DAILY"), Count: client.Ptr(2)}))
	must(c.Occurrences.List(ctx, client.ListOccurrencesParams{EventID: client.Ptr(id), Archived: client.Ptr(false),
		Order: client.Ptr(client.OccurrenceOrderMinusScheduledAt)}))
	must(c.Occurrences.Get(ctx, id))
	must(c.Occurrences.Attempts(ctx, id))
	must(c.Occurrences.Replay(ctx, id))
	must(c.Occurrences.ReplayDelivery(ctx, id, id))
	must(c.Occurrences.Deliveries(ctx, id, client.ListOccurrenceDeliveriesParams{Limit: client.Ptr(5), Cursor: client.Ptr("c")}))
	must(c.Subscriptions.Deliveries(ctx, id, client.ListSubscriptionDeliveriesParams{Limit: client.Ptr(5)}))
	must(c.Occurrences.ReplayMatching(ctx, client.RetryFilter{Status: client.Ptr("failed"), Limit: client.Ptr(10)}))
	must(c.Tokens.Create(ctx, client.TokenRequest{Sub: "ci", Access: client.TokenRequestAccessRead,
		ExpiresAt: time.Now().Add(time.Hour), Scope: []string{"a"}}))
	must(c.Tokens.List(ctx))
	require.NoError(t, c.Tokens.Revoke(ctx, "tok"))
	must(c.Events.PauseUntil(ctx, id, time.Now().Add(time.Hour), "deploy", "skip"))
	must(c.Events.ResumeWith(ctx, id, "fire"))
	must(c.Events.Exceptions(ctx, id))
	must(c.Events.AddException(ctx, id, client.Exception{At: time.Now().Add(time.Hour), Action: client.ExceptionActionSkip}))
	require.NoError(t, c.Events.DeleteException(ctx, id, time.Now().Add(time.Hour)))
	must(c.Occurrences.Skip(ctx, id, "holiday"))
	must(c.Occurrences.Unskip(ctx, id))
	must(c.Occurrences.Move(ctx, id, time.Now().Add(time.Hour), ""))
	must(c.Occurrences.Complete(ctx, id, client.RunReport{Status: client.RunReportStatusSucceeded,
		Output: map[string]int{"rows": 42}}, client.RunToken("qrun_x")))
	must(c.Occurrences.Complete(ctx, id, client.RunReport{Status: client.RunReportStatusFailed}))
	must(c.Occurrences.Heartbeat(ctx, id, client.RunToken("qrun_x")))
	must(c.Calendars.Create(ctx, client.CalendarInput{Name: "holidays"}))
	must(c.Calendars.List(ctx, client.GetCalendarsParams{Tags: []string{"a"}}))
	must(c.Calendars.Get(ctx, id))
	must(c.Calendars.Update(ctx, id, client.CalendarInput{Name: "holidays"}, client.IfMatch(`"1"`)))
	require.NoError(t, c.Calendars.Delete(ctx, id))
	must(c.Topics.Create(ctx, client.TopicRequest{Name: client.Ptr("digest.daily"),
		Schema: client.Ptr(json.RawMessage(`{"type":"object"}`))}))
	must(c.Topics.List(ctx, client.ListTopicsParams{Limit: client.Ptr(5), Cursor: client.Ptr("c")}))
	must(c.Topics.Get(ctx, "digest.daily"))
	must(c.Topics.Update(ctx, "digest.daily", client.TopicRequest{Description: client.Ptr("d")}, client.IfMatch(`"1"`)))
	must(c.Topics.UpdateFields(ctx, "digest.daily", map[string]any{"schema": nil}))
	require.NoError(t, c.Topics.Delete(ctx, "digest.daily"))
	must(c.Subscriptions.Create(ctx, client.TopicSubscriptionRequest{Topic: client.Ptr("digest.*"),
		EndpointID: client.Ptr(id), Filter: client.Ptr(`tags.exists(t, t == "a")`), Tags: []string{"a"}}))
	must(c.Subscriptions.List(ctx, client.ListSubscriptionsParams{Topic: client.Ptr("digest.*"),
		Paused: client.Ptr(false), EndpointID: client.Ptr(id)}))
	must(c.Subscriptions.Get(ctx, id))
	must(c.Subscriptions.Update(ctx, id, client.TopicSubscriptionRequest{Paused: client.Ptr(true)}))
	must(c.Subscriptions.UpdateFields(ctx, id, map[string]any{"filter": nil}))
	must(c.Subscriptions.Pause(ctx, id))
	must(c.Subscriptions.Resume(ctx, id))
	require.NoError(t, c.Subscriptions.Delete(ctx, id))
	must(c.NotificationChannels.Create(ctx, client.NotificationChannelRequest{Name: client.Ptr("ops")}))
	must(c.NotificationChannels.List(ctx))
	must(c.NotificationChannels.Get(ctx, id))
	must(c.NotificationChannels.Update(ctx, id, client.NotificationChannelRequest{Name: client.Ptr("ops")}))
	must(c.NotificationChannels.UpdateFields(ctx, id, map[string]any{"tags": []string{}}))
	require.NoError(t, c.NotificationChannels.Delete(ctx, id))
	must(c.NotificationChannels.Test(ctx, id))
	must(c.NotificationChannels.Notices(ctx, id, client.NoticesParams{Limit: client.Ptr(5), Cursor: client.Ptr("c")}))
	must(c.Endpoints.Create(ctx, client.EndpointInput{Name: "billing", URL: "https://example.com/h",
		RateLimit: &client.EndpointRateLimit{PerSecond: 5}, Auth: &client.EndpointAuthInput{
			Type: client.EndpointAuthInputTypeBasic, Username: client.Ptr("u"), Password: client.Ptr("p")}}))
	must(c.Endpoints.List(ctx, client.ListEndpointsParams{Tags: []string{"a"},
		State: client.Ptr(client.ListEndpointsParamsStateOpen)}))
	must(c.Endpoints.Get(ctx, id))
	must(c.Endpoints.Update(ctx, id, client.EndpointPatch{Name: client.Ptr("b")}, client.IfMatch(`"1"`)))
	must(c.Endpoints.UpdateFields(ctx, id, map[string]any{"rate_limit": nil}))
	require.NoError(t, c.Endpoints.Delete(ctx, id))
	must(c.Endpoints.Enable(ctx, id))
	must(c.Endpoints.Disable(ctx, id))
	must(c.Endpoints.RotateSecret(ctx, id, time.Hour))
	must(c.Endpoints.Test(ctx, id))
	must(c.Endpoints.CircuitHistory(ctx, id, client.CircuitHistoryParams{Limit: client.Ptr(5), Cursor: client.Ptr("c")}))
	must(c.ConcurrencyKeys.List(ctx, client.ListConcurrencyKeysParams{Limit: client.Ptr(5), Cursor: client.Ptr("c")}))
	must(c.ConcurrencyKeys.Get(ctx, "customer-42"))
	must(c.ConcurrencyKeys.Pause(ctx, "customer-42"))
	must(c.ConcurrencyKeys.Resume(ctx, "customer-42"))
	must(c.PortalLinks.Create(ctx, client.PortalLinkRequest{Tags: []string{"customer-42"}, ExpiresIn: client.Ptr("1h"),
		ReturnURL: client.Ptr("https://app.example.com/settings")}))
	must(c.PortalLinks.Redeem(ctx, "qpl_x"))

	var missing []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			op := method + " " + path
			if alias, ok := aliases[op]; ok {
				op = alias
			}
			if !hit[op] {
				missing = append(missing, method+" "+path)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("operations of %s the client never calls (add a method, then run go generate ./client):\n  %s",
			documentPath, strings.Join(missing, "\n  "))
	}
}

// writeMinimalAnswer answers with the first 2xx of op and the smallest body
// of its schema's kind.
func writeMinimalAnswer(w http.ResponseWriter, op *openapi3.Operation) {
	codes := []string{}
	for code := range op.Responses.Map() {
		if strings.HasPrefix(code, "2") {
			codes = append(codes, code)
		}
	}
	slices.Sort(codes)
	code := 200
	if len(codes) > 0 {
		code, _ = strconv.Atoi(codes[0])
	}
	body := "{}"
	if resp := op.Responses.Value(codes[0]); resp != nil && resp.Value != nil {
		if mt := resp.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && mt.Schema.Value.Type.Is("array") {
			body = "[]"
		} else if resp.Value.Content.Get("text/plain") != nil {
			body = "text"
		}
	}
	if code == http.StatusNoContent {
		w.WriteHeader(code)
		return
	}
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

// goTypes are the generated types of the document's schemas.
var goTypes = map[string]any{
	"PortalLink": client.PortalLink{}, "PortalLinkRequest": client.PortalLinkRequest{},
	"PortalRedeemRequest": client.PortalRedeemRequest{}, "PortalSession": client.PortalSession{},
	"Error": client.Error{}, "Action": client.Action{}, "Schedule": client.Schedule{}, "Retry": client.Retry{},
	"EventInput": client.EventInput{}, "Event": client.Event{}, "EventUpsertInput": client.EventUpsertInput{},
	"EventBatchInput": client.EventBatchInput{}, "EventBatchItemResult": client.EventBatchItemResult{},
	"EventBatchResult": client.EventBatchResult{}, "Occurrence": client.Occurrence{},
	"OccurrencePage": client.OccurrencePage{}, "Attempt": client.Attempt{}, "AttemptRequest": client.AttemptRequest{}, "TokenRequest": client.TokenRequest{},
	"Token": client.Token{}, "Preview": client.Preview{}, "PreviewRequest": client.PreviewRequest{},
	"SecretRotation": client.SecretRotation{}, "Health": client.Health{}, "Ready": client.Ready{},
	"Status": client.Status{}, "Stats": client.Stats{}, "RetryFilter": client.RetryFilter{},
	"RetryResult": client.RetryResult{}, "Timeline": client.Timeline{}, "PunctualityCounts": client.PunctualityCounts{},
	"PunctualityGroup": client.PunctualityGroup{}, "PunctualityPoint": client.PunctualityPoint{},
	"PunctualityReport": client.PunctualityReport{}, "OccurrenceOrder": client.OccurrenceOrder(""),
	"Exception": client.Exception{}, "PauseRequest": client.PauseRequest{}, "ResumeRequest": client.ResumeRequest{},
	"Calendar": client.Calendar{}, "CalendarInput": client.CalendarInput{}, "DateRange": client.DateRange{},
	"HistoryEntry": client.HistoryEntry{}, "HistoryChange": client.HistoryChange{}, "HistoryPage": client.HistoryPage{},
	"Endpoint": client.Endpoint{}, "EndpointInput": client.EndpointInput{}, "EndpointPatch": client.EndpointPatch{},
	"EndpointAuth": client.EndpointAuth{}, "EndpointAuthInput": client.EndpointAuthInput{},
	"EndpointCircuit": client.EndpointCircuit{}, "EndpointRateLimit": client.EndpointRateLimit{},
	"EndpointHealth": client.EndpointHealth{}, "NotificationTestResult": client.NotificationTestResult{}, "EndpointTestResult": client.EndpointTestResult{},
	"NotificationChannel": client.NotificationChannel{}, "NotificationChannelRequest": client.NotificationChannelRequest{},
	"CircuitEntry": client.CircuitEntry{}, "CircuitHistoryPage": client.CircuitHistoryPage{},
	"SentNotice": client.SentNotice{}, "NoticePage": client.NoticePage{},
	"BackfillRequest": client.BackfillRequest{}, "BackfillResult": client.BackfillResult{},
	"Run": client.Run{}, "RunReport": client.RunReport{},
	"Concurrency": client.Concurrency{}, "ConcurrencyKey": client.ConcurrencyKey{}, "ConcurrencyKeyPage": client.ConcurrencyKeyPage{},
	"Topic": client.Topic{}, "TopicRequest": client.TopicRequest{}, "TopicPage": client.TopicPage{},
	"Subscription": client.TopicSubscription{}, "SubscriptionRequest": client.TopicSubscriptionRequest{},
	"SubscriptionPage": client.TopicSubscriptionPage{}, "FanoutSummary": client.FanoutSummary{},
	"Delivery": client.Delivery{}, "DeliveryPage": client.DeliveryPage{}, "AttemptPage": client.AttemptPage{},
	"ReplayRequest": client.ReplayRequest{},
}

// The generated types have exactly the properties of the document's schemas,
// and a required property is never a pointer the decoder could leave nil.
func TestTypesMatchDocument(t *testing.T) {
	t.Parallel()
	doc := loadDocument(t)
	for name, ref := range doc.Components.Schemas {
		goType, ok := goTypes[name]
		if !ok {
			t.Errorf("schema %s has no Go type here: run go generate ./client and add it to goTypes", name)
			continue
		}
		fields := map[string]reflect.StructField{}
		rt := reflect.TypeOf(goType)
		if rt.Kind() == reflect.String { // a string enum: every value of the document is a valid one here
			require.Empty(t, ref.Value.Properties, "schema %s has properties but client.%s is a string", name, name)
			for _, v := range ref.Value.Enum {
				value := reflect.ValueOf(v).Convert(rt).Interface().(interface{ Valid() bool })
				require.True(t, value.Valid(), "%s value %q is not in client.%s: run go generate ./client", name, v, name)
			}
			continue
		}
		for i := range rt.NumField() {
			tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			fields[tag] = rt.Field(i)
		}
		for prop, schema := range ref.Value.Properties {
			f, ok := fields[prop]
			if !ok {
				t.Errorf("%s.%s is in the document but not in client.%s: run go generate ./client", name, prop, name)
				continue
			}
			if slices.Contains(ref.Value.Required, prop) && !schema.Value.Nullable && f.Type.Kind() == reflect.Pointer {
				t.Errorf("%s.%s is required but client.%s.%s is a pointer", name, prop, name, f.Name)
			}
			delete(fields, prop)
		}
		for prop := range fields {
			t.Errorf("client.%s has %q, which the document's %s no longer has: run go generate ./client", name, prop, name)
		}
	}
	for name := range goTypes {
		if _, ok := doc.Components.Schemas[name]; !ok {
			t.Errorf("client.%s has no schema in the document any more: run go generate ./client", name)
		}
	}
}
