package console

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/qhronos/qhronos/client"
)

// The console reads and writes through the Go SDK, as any other client
// does, so the API's shapes have one Go client to keep up to date. The SDK's
// requests do not leave the process: apiTransport hands each one to the API
// handler with the signed-in user's bearer token, so scope rules, 404s and
// validation errors are exactly the API's.

// sdkBase is the SDK's base URL; the host is never dialled.
const sdkBase = "http://qhronos.internal"

// sessionKey holds the request's *session in its context (set by signedIn).
type sessionKey struct{}

// withSession returns r carrying s, for sdk.
func withSession(r *http.Request, s *session) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), sessionKey{}, s))
}

// apiError is an API refusal as the console's pages and forms handle it:
// the status, the message and, for validation errors, the field it names.
type apiError struct {
	Status  int
	Message string
	Field   string
}

func (e *apiError) Error() string { return e.Message }

// errSignedOut means the API answered 401: the token was revoked or expired.
var errSignedOut = errors.New("the API no longer accepts this token")

// fieldMessage strips the field name off an API message ("rrule: ..." →
// "..."), for showing it next to the field.
func fieldMessage(e *apiError) string {
	if e.Field != "" {
		if rest, ok := strings.CutPrefix(e.Message, e.Field+": "); ok {
			return rest
		}
	}
	return e.Message
}

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

// apiTransport is an http.RoundTripper that serves requests with the API
// handler in-process.
type apiTransport struct {
	api  http.Handler
	from *http.Request
}

// RoundTrip keeps the browser's address as the remote address and its
// request id, so the API's per-client limits and logs see the real client.
func (t *apiTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	in := req.Clone(req.Context())
	in.RequestURI = in.URL.RequestURI()
	in.RemoteAddr = t.from.RemoteAddr
	if id := t.from.Header.Get("X-Request-ID"); id != "" {
		in.Header.Set("X-Request-ID", id)
	}
	if in.Body == nil {
		in.Body = http.NoBody
	}
	rec := &recorder{header: http.Header{}}
	t.api.ServeHTTP(rec, in)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{Status: http.StatusText(rec.status), StatusCode: rec.status, Proto: "HTTP/1.1",
		ProtoMajor: 1, ProtoMinor: 1, Header: rec.header, Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		ContentLength: int64(rec.body.Len()), Request: req}, nil
}

// sdk is the Go SDK acting for the signed-in user of r. Retries are off:
// an in-process call that failed would fail the same way again, and a
// retried POST would need an idempotency key the console has no use for.
func (c *Console) sdk(r *http.Request) *client.Client {
	token := ""
	if s, ok := r.Context().Value(sessionKey{}).(*session); ok {
		token = s.Token
	} else if s, ok := c.sessions.read(r); ok {
		token = s.Token
	}
	return c.sdkFor(r, token)
}

// sdkFor is the SDK acting with token for the browser request r: the
// sign-in form's token before any session exists, and the Live stream's
// session token in its long-running goroutines.
func (c *Console) sdkFor(r *http.Request, token string) *client.Client {
	sdk, err := client.New(sdkBase, client.WithToken(token), client.WithVia("console"), client.WithRetries(0),
		client.WithUserAgent("qhronos-console"),
		client.WithHTTPClient(&http.Client{Transport: &apiTransport{api: c.opts.API, from: r}}),
		client.WithWebSocketHTTPClient(c.ws.client))
	if err != nil {
		panic("console: the SDK refused its constant base URL: " + err.Error()) // cannot happen: sdkBase is valid
	}
	return sdk
}

// sdkError turns an SDK error into the console's: a 401 is errSignedOut,
// any other API answer an *apiError, which fail and the forms understand.
func sdkError(err error) error {
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

// wsDialer carries the SDK's /ws connections in process: each dial is one
// end of a net.Pipe whose other end an http.Server serving the API handler
// accepts, so the Live page is a WebSocket client like any other (the SDK's
// Subscribe), without a network address of its own. apiTransport cannot do
// this: it answers a request with a recorded response, and a WebSocket needs
// the connection itself.
type wsDialer struct {
	api    http.Handler
	once   sync.Once
	conns  chan net.Conn
	done   chan struct{}
	server *http.Server
	// client is the HTTP client the SDK dials /ws with
	// (client.WithWebSocketHTTPClient); the host it names is never resolved.
	client *http.Client
}

func newWSDialer(api http.Handler) *wsDialer {
	d := &wsDialer{api: api, conns: make(chan net.Conn), done: make(chan struct{})}
	d.client = &http.Client{Transport: &http.Transport{DialContext: d.dialContext}}
	return d
}

// pipeListener hands the server ends of pipes to http.Server.
type pipeListener struct{ d *wsDialer }

func (l pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.d.conns:
		return c, nil
	case <-l.d.done:
		return nil, net.ErrClosed
	}
}
func (l pipeListener) Close() error   { return nil }
func (l pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "console" }

// start serves the pipes; it runs on the first dial, so a console whose
// Live page is never opened starts no server.
func (d *wsDialer) start() {
	d.server = &http.Server{Handler: d.api, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = d.server.Serve(pipeListener{d}) }()
}

func (d *wsDialer) dialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	d.once.Do(d.start)
	client, server := net.Pipe()
	select {
	case d.conns <- server:
		return client, nil
	case <-d.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// close stops the server. The empty Do waits for a start under way (or
// keeps one from starting), so d.server is read after it is written.
func (d *wsDialer) close() {
	close(d.done)
	d.once.Do(func() {})
	if d.server != nil {
		_ = d.server.Close()
	}
}
