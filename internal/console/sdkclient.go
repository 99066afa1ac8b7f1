package console

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/qhronos/qhronos/client"
)

// sdkBase is the base URL the console's SDK client is built with; requests
// never leave the process, the host only fills the request line.
const sdkBase = "http://qhronos.internal"

// inProcess is an http.RoundTripper that hands every request to the API's
// http.Handler in this process: the console is a client of the public API
// over the same Go SDK its users have, without a socket in between.
type inProcess struct {
	api http.Handler
	// from is the browser's request: its address and request id go on to
	// the API, so per-client limits and logs see the real client.
	from *http.Request
}

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	// A RoundTripper must not change the caller's request.
	req = req.Clone(req.Context())
	if t.from != nil {
		req.RemoteAddr = t.from.RemoteAddr
		if id := t.from.Header.Get("X-Request-ID"); id != "" {
			req.Header.Set("X-Request-ID", id)
		}
	}
	req.RequestURI = req.URL.RequestURI()
	rec := &recorder{header: http.Header{}}
	t.api.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		Status: http.StatusText(rec.status), StatusCode: rec.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rec.header, Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		ContentLength: int64(rec.body.Len()), Request: req,
	}, nil
}

type sessionKey struct{}

// withSession keeps the signed-in session on the request's context, where
// sdk finds its token.
func withSession(ctx context.Context, s *session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// sdk is the Go SDK client of the public API, acting as the signed-in user
// of r (their bearer token). Retries are off: the API is in-process, and a
// page reports an answer rather than waiting on it.
func (c *Console) sdk(r *http.Request) *client.Client {
	token := ""
	if s, ok := r.Context().Value(sessionKey{}).(*session); ok && s != nil {
		token = s.Token
	} else if s, ok := c.sessions.read(r); ok {
		token = s.Token
	}
	cl, err := client.New(sdkBase, client.WithToken(token), client.WithVia("console"), client.WithRetries(0),
		client.WithUserAgent("qhronos-console"),
		client.WithHTTPClient(&http.Client{Transport: inProcess{api: c.opts.API, from: r}}))
	if err != nil {
		// sdkBase is a constant http URL: New cannot refuse it.
		panic(err)
	}
	return cl
}

// sdkErr turns an SDK error into the console's: a 401 is errSignedOut (the
// token was revoked or expired), any other API answer an *apiError that
// fail and the forms show; anything else is returned as it is.
func sdkErr(err error) error {
	var ae *client.APIError
	if !errors.As(err, &ae) {
		return err
	}
	if ae.StatusCode == http.StatusUnauthorized {
		return errSignedOut
	}
	msg := ae.Message
	if msg == "" {
		msg = "the API answered " + http.StatusText(ae.StatusCode)
	}
	return &apiError{Status: ae.StatusCode, Message: msg, Field: ae.Field}
}
