package api

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// openAPISpec is the parsed, validated document and a router over it, built
// once per test process: every answer the suite receives through e.do is
// checked against it, so the published contract cannot drift from the server.
var openAPISpec = sync.OnceValues(func() (*openAPIContract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPIDocument)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &openAPIContract{doc: doc, router: router}, nil
})

type openAPIContract struct {
	doc    *openapi3.T
	router routers.Router
}

// validateResponse checks one real answer against the document: its status
// must be documented for the route, and its headers and body must match the
// schema. Requests to paths the document does not describe (probes of
// unknown routes) are not checked here; TestOpenAPIRoutesMatchServer keeps
// the two route sets equal.
func (c *openAPIContract) validateResponse(req *http.Request, res response) error {
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return nil
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params,
			Route: route, Options: opts},
		Status:  res.Status,
		Header:  res.Header,
		Body:    io.NopCloser(bytes.NewReader(res.Body)),
		Options: opts,
	}
	return openapi3filter.ValidateResponse(req.Context(), in)
}

// checkOpenAPI is the harness hook: it fails the test that made the request
// when the answer breaks the document.
func (e *env) checkOpenAPI(req *http.Request, res response) {
	e.t.Helper()
	if e.skipOpenAPI {
		return
	}
	spec, err := openAPISpec()
	require.NoError(e.t, err, "openapi.json must load and validate")
	if err := spec.validateResponse(req, res); err != nil {
		e.t.Errorf("%s %s answered %d, which openapi.json does not allow: %v\nbody: %.500s",
			req.Method, req.URL.Path, res.Status, err, res.Body)
	}
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	spec, err := openAPISpec()
	require.NoError(t, err)
	if got, want := spec.doc.OpenAPI, "3.0.3"; got != want {
		t.Errorf("openapi version: got %q, want %q", got, want)
	}
}

var ginParam = regexp.MustCompile(`:([A-Za-z_]+)`)

// TestOpenAPIRoutesMatchServer fails when a route is registered without being
// documented, or documented without being served.
func TestOpenAPIRoutesMatchServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	spec, err := openAPISpec()
	require.NoError(t, err)

	served := map[string]bool{}
	for _, r := range e.srv.engine.Routes() {
		served[r.Method+" "+ginParam.ReplaceAllString(r.Path, "{$1}")] = true
	}
	documented := map[string]bool{}
	for path, item := range spec.doc.Paths.Map() {
		for method := range item.Operations() {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	var missing, extra []string
	for r := range served {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for r := range documented {
		if !served[r] {
			extra = append(extra, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes served but not in openapi.json: %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("routes in openapi.json but not served: %v", extra)
	}
}

// TestOpenAPIServedDocument checks that /openapi.json serves the embedded
// document unchanged and publicly.
func TestOpenAPIServedDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	res := e.do("GET", "/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, res.Status)
	if !bytes.Equal(res.Body, OpenAPIDocument) {
		t.Errorf("served document differs from the embedded openapi.json")
	}
}

// TestOpenAPIRejectsUndocumentedAnswers proves the hook can fail: an answer
// with an undocumented status or a body that breaks its schema is reported.
func TestOpenAPIRejectsUndocumentedAnswers(t *testing.T) {
	t.Parallel()
	spec, err := openAPISpec()
	require.NoError(t, err)
	req, err := http.NewRequest("GET", "http://127.0.0.1/events/abc", nil)
	require.NoError(t, err)
	jsonHeader := http.Header{"Content-Type": []string{"application/json"}}
	tests := []struct {
		name string
		res  response
		ok   bool
	}{
		{"documented 404", response{Status: 404, Header: jsonHeader, Body: []byte(`{"error":"not found"}`)}, true},
		{"undocumented status", response{Status: 418, Header: jsonHeader, Body: []byte(`{"error":"teapot"}`)}, false},
		{"error without message", response{Status: 404, Header: jsonHeader, Body: []byte(`{"field":"x"}`)}, false},
		{"event missing fields", response{Status: 200, Header: jsonHeader, Body: []byte(`{"id":1}`)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := spec.validateResponse(req, tt.res)
			if got := err == nil; got != tt.ok {
				t.Errorf("valid: got %v, want %v (err %v)", got, tt.ok, err)
			}
		})
	}
}
