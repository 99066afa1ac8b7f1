package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// apiResult is one answer of the public API.
type apiResult struct {
	Status int
	Header http.Header
	Body   []byte
}

// apiError is the API's error body: a message and, for validation errors,
// the field it names.
type apiError struct {
	Status  int
	Message string `json:"error"`
	Field   string `json:"field"`
}

func (e *apiError) Error() string { return e.Message }

// errSignedOut means the API answered 401: the token was revoked or expired.
var errSignedOut = errors.New("the API no longer accepts this token")

// recorder is the minimal ResponseWriter an in-process API call needs.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}

// call sends one request to the API handler with the token as bearer. The
// browser's address is kept as the remote address, so the API's per-client
// limits and logs see the real client.
func (c *Console) call(ctx context.Context, from *http.Request, token, method, path string, query url.Values, body any) (*apiResult, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://qhronos.internal"+target, rd)
	if err != nil {
		return nil, err
	}
	if from != nil {
		req.RemoteAddr = from.RemoteAddr
		if id := from.Header.Get("X-Request-ID"); id != "" {
			req.Header.Set("X-Request-ID", id)
		}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Qhronos-Via", "console")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := &recorder{header: http.Header{}}
	c.opts.API.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &apiResult{Status: rec.status, Header: rec.header, Body: rec.body.Bytes()}, nil
}

// do calls the API and decodes a 2xx JSON answer into out (when not nil).
// A 401 is errSignedOut; any other non-2xx is an *apiError.
func (c *Console) do(r *http.Request, s *session, method, path string, query url.Values, body, out any) (*apiResult, error) {
	res, err := c.call(r.Context(), r, s.Token, method, path, query, body)
	if err != nil {
		return nil, err
	}
	if res.Status == http.StatusUnauthorized {
		return res, errSignedOut
	}
	if res.Status < 200 || res.Status > 299 {
		e := &apiError{Status: res.Status}
		if json.Unmarshal(res.Body, e) != nil || e.Message == "" {
			e.Message = fmt.Sprintf("the API answered %d", res.Status)
		}
		return res, e
	}
	if out != nil && len(res.Body) > 0 {
		if err := json.Unmarshal(res.Body, out); err != nil {
			return res, fmt.Errorf("decode %s %s: %w", method, path, err)
		}
	}
	return res, nil
}

var nextLink = regexp.MustCompile(`<([^>]*)>;\s*rel="next"`)

// nextCursor extracts the cursor of the Link: rel="next" header.
func nextCursor(h http.Header) string {
	m := nextLink.FindStringSubmatch(h.Get("Link"))
	if m == nil {
		return ""
	}
	u, err := url.Parse(m[1])
	if err != nil {
		return ""
	}
	return u.Query().Get("cursor")
}

// fieldOf strips the field name off an API message ("rrule: ..." → "...").
func fieldMessage(e *apiError) string {
	if e.Field != "" {
		if rest, ok := strings.CutPrefix(e.Message, e.Field+": "); ok {
			return rest
		}
	}
	return e.Message
}
