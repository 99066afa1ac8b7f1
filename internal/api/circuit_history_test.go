package api

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

type pageAnswer[T any] struct {
	Data       []T `json:"data"`
	Pagination struct {
		Limit      int    `json:"limit"`
		NextCursor string `json:"next_cursor"`
	} `json:"pagination"`
}

type circuitEntryAnswer struct {
	Change    string `json:"change"`
	FromState string `json:"from_state"`
	ToState   string `json:"to_state"`
	Reason    string `json:"reason"`
	Subject   string `json:"subject"`
	Channel   string `json:"channel"`
}

// requireFieldError checks a 400 whose error names field.
func requireFieldError(t *testing.T, res response, field string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
	var eb struct{ Error, Field string }
	res.json(t, &eb)
	require.True(t, strings.HasPrefix(eb.Error, field+": ") || eb.Field == field,
		"error %q (field %q) should name %s", eb.Error, eb.Field, field)
}

func TestEndpointCircuitHistory(t *testing.T) {
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			testEndpointCircuitHistory(t, b.Open)
		})
	}
}

func testEndpointCircuitHistory(t *testing.T, open func(testing.TB) *repository.Store) {
	e := newEnv(t, open)
	teamA := e.mint("write", []string{"team-a"})
	readerA := e.mint("read", []string{"team-a"})
	teamB := e.mint("write", []string{"team-b"})
	created := e.createEndpoint(teamA, endpointBody("team-a"))
	id, _ := created["id"].(string)

	res := e.do("GET", "/endpoints/"+id+"/circuit-history", readerA, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.JSONEq(t, `{"data": [], "pagination": {"limit": 50}}`, string(res.Body))

	require.Equal(t, http.StatusOK, e.do("POST", "/endpoints/"+id+"/disable", teamA, nil, "X-Qhronos-Via", "cli").Status)
	require.Equal(t, http.StatusOK, e.do("POST", "/endpoints/"+id+"/disable", teamA, nil).Status)
	require.Equal(t, http.StatusOK, e.do("POST", "/endpoints/"+id+"/enable", teamA, nil).Status)

	res = e.do("GET", "/endpoints/"+id+"/circuit-history?limit=1", readerA, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var first pageAnswer[circuitEntryAnswer]
	res.json(t, &first)
	require.Equal(t, []circuitEntryAnswer{{Change: "enabled", FromState: "disabled", ToState: "healthy",
		Subject: "user-write", Channel: "api"}}, first.Data)
	require.NotEmpty(t, first.Pagination.NextCursor)
	require.Contains(t, res.Header.Get("Link"), `rel="next"`)

	res = e.do("GET", "/endpoints/"+id+"/circuit-history?limit=1&cursor="+url.QueryEscape(first.Pagination.NextCursor),
		readerA, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var second pageAnswer[circuitEntryAnswer]
	res.json(t, &second)
	require.Equal(t, []circuitEntryAnswer{{Change: "disabled", FromState: "healthy", ToState: "disabled",
		Reason: "manual", Subject: "user-write", Channel: "cli"}}, second.Data,
		"disabling an endpoint already disabled is no transition")
	require.Empty(t, second.Pagination.NextCursor)

	requireFieldError(t, e.do("GET", "/endpoints/"+id+"/circuit-history?cursor=garbage", readerA, nil), "cursor")
	requireFieldError(t, e.do("GET", "/endpoints/"+id+"/circuit-history?limit=0", readerA, nil), "limit")
	requireFieldError(t, e.do("GET", "/endpoints/"+id+"/circuit-history?limit=many", readerA, nil), "limit")
	for _, c := range []struct{ token, id string }{{teamB, id}, {teamA, uuid.NewString()}, {teamA, "nope"}} {
		res = e.do("GET", "/endpoints/"+c.id+"/circuit-history", c.token, nil)
		require.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
	}
}

type noticeAnswer struct {
	Kind    string `json:"kind"`
	Summary string `json:"summary"`
	Outcome string `json:"outcome"`
	Answer  string `json:"answer"`
	Test    bool   `json:"test"`
}

func TestNotificationChannelNotices(t *testing.T) {
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			testNotificationChannelNotices(t, b.Open)
		})
	}
}

func testNotificationChannelNotices(t *testing.T, open func(testing.TB) *repository.Store) {
	e := newEnv(t, open)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(recv.Close)
	res := e.do("POST", "/notification-channels", e.master, map[string]any{"name": "ops", "type": "webhook",
		"url": recv.URL + "/hook?token=s3cr3t-query"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	id, _ := res.object(t)["id"].(string)
	path := "/notification-channels/" + id + "/notices"

	res = e.do("GET", path, e.master, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.JSONEq(t, `{"data": [], "pagination": {"limit": 50}}`, string(res.Body))

	require.Equal(t, http.StatusOK, e.do("POST", "/notification-channels/"+id+"/test", e.master, nil).Status)
	recv.Close() // the next test fails
	require.Equal(t, http.StatusOK, e.do("POST", "/notification-channels/"+id+"/test", e.master, nil).Status)

	res = e.do("GET", path, e.master, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.NotContains(t, string(res.Body), "s3cr3t-query", "the URL's query values are redacted in errors")
	var page pageAnswer[noticeAnswer]
	res.json(t, &page)
	require.Len(t, page.Data, 2, "%s", res.Body)
	failed, delivered := page.Data[0], page.Data[1]
	require.Equal(t, noticeAnswer{Kind: "test", Summary: "Test notice for channel ops", Outcome: "delivered",
		Answer: "HTTP 202", Test: true}, delivered)
	require.Equal(t, "failed", failed.Outcome)
	require.True(t, failed.Test)
	require.Contains(t, failed.Answer, "post notice")

	res = e.do("GET", path+"?limit=1", e.master, nil)
	var one pageAnswer[noticeAnswer]
	res.json(t, &one)
	require.Len(t, one.Data, 1)
	res = e.do("GET", path+"?limit=1&cursor="+url.QueryEscape(one.Pagination.NextCursor), e.master, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var two pageAnswer[noticeAnswer]
	res.json(t, &two)
	require.Equal(t, []noticeAnswer{delivered}, two.Data)

	requireFieldError(t, e.do("GET", path+"?cursor=garbage", e.master, nil), "cursor")
	requireFieldError(t, e.do("GET", path+"?limit=-1", e.master, nil), "limit")
	res = e.do("GET", "/notification-channels/"+uuid.NewString()+"/notices", e.master, nil)
	require.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
	writer := e.mint("write", nil)
	res = e.do("GET", path, writer, nil)
	require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
}
