package actions

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/qhronos/qhronos/internal/redact"
)

// RequestBodyLimit bounds the body bytes an attempt's recorded request keeps.
const RequestBodyLimit = 64 << 10

// Redacted is shown instead of a signature header's value.
const Redacted = "[redacted]"

// SentRequest is the request an attempt sent, as recorded with it (see
// HTTPConfig.record): what the receiver got, except for the values that
// must never be shown again.
type SentRequest struct {
	Method        string            `json:"method"`
	URL           string            `json:"url"`
	Headers       map[string]string `json:"headers"`
	Body          string            `json:"body"`
	BodyTruncated bool              `json:"body_truncated"`
}

// recordHints tell record where the parts of a request came from.
type recordHints struct {
	// body is the body sent (nil: none).
	body []byte
	// configured are the headers the event or its endpoint set: their
	// values are write-only (the event's and the endpoint's pages show
	// them as fingerprints), and so is each here.
	configured []map[string]string
	// paramsBody marks a body written by the event's author (an API
	// call's params.body): redacted as the event's page shows it.
	paramsBody bool
	// shownURL, when set, keeps the URL as recorded for a delivery whose
	// URL never changes: parsing it again to redact it on every attempt
	// was 3 % of qhronosd's CPU in a burst (BENCHMARKS.md, "#36: eleventh
	// step"). nil for targets resolved per attempt (endpoints).
	shownURL *atomic.Pointer[string]
}

// qhronosHeaders are set by Qhronos itself and shown as sent, even when
// their name looks like a credential's (Idempotency-Key is the delivery id).
var qhronosHeaders = map[string]bool{
	"Content-Type": true, "Content-Length": true, "User-Agent": true, "Accept-Encoding": true,
	"Idempotency-Key": true, "Webhook-Id": true, "Webhook-Timestamp": true, "Traceparent": true, "Tracestate": true,
}

// signatureHeaders carry an HMAC of the body under the event's secret.
var signatureHeaders = map[string]bool{
	http.CanonicalHeaderKey(HeaderQhronosSignature):    true,
	http.CanonicalHeaderKey(HeaderQhronosSignatureNew): true,
	http.CanonicalHeaderKey(HeaderWebhookSignature):    true,
}

// redactor is the configured one, or one with a key of this process only:
// its fingerprints then match nothing else, and reveal nothing either.
func (c HTTPConfig) redactor() *redact.Redactor {
	if c.Redactor != nil {
		return c.Redactor
	}
	return processRedactor
}

var processRedactor = func() *redact.Redactor {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return redact.New(key)
}()

// record is r as the attempt keeps it: the URL by redact.URL (userinfo and
// query values as fingerprints), every header the transport will send
// (signatures as Redacted; configured values and credential-named ones as
// fingerprints), and the body up to RequestBodyLimit. nil when recording
// is off.
func (c HTTPConfig) record(r *http.Request, h recordHints) *SentRequest {
	if c.OmitRequests {
		return nil
	}
	red := c.redactor()
	configured := map[string]bool{}
	for _, set := range h.configured {
		for k := range set {
			configured[http.CanonicalHeaderKey(k)] = true
		}
	}
	out := &SentRequest{Method: r.Method, URL: h.url(red, r), Headers: make(map[string]string, len(r.Header)+1)}
	for name, values := range r.Header {
		out.Headers[name] = showHeader(red, name, strings.Join(values, ", "), configured[name])
	}
	// What the transport adds to the request's own headers.
	switch {
	case r.ContentLength > 0:
		out.Headers["Content-Length"] = strconv.FormatInt(r.ContentLength, 10)
	case r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch:
		out.Headers["Content-Length"] = "0"
	}
	body := h.body
	if h.paramsBody {
		body = redactParamsBody(red, body)
	}
	out.Body, out.BodyTruncated = cutBody(body)
	return out
}

// url is r's URL as recorded: redacted, and remembered in h.shownURL.
func (h recordHints) url(red *redact.Redactor, r *http.Request) string {
	if h.shownURL == nil {
		return red.URL(r.URL.String())
	}
	if shown := h.shownURL.Load(); shown != nil {
		return *shown
	}
	shown := red.URL(r.URL.String())
	h.shownURL.Store(&shown)
	return shown
}

// JSON is the request as json.Marshal writes it (the headers in the order
// of their names), without its reflection and without the pass over the
// output a MarshalJSON method would get.
func (r *SentRequest) JSON() []byte {
	// Sized for the body's escaped quotes and backslashes too: a JSON body
	// has many, and growing the buffer for them doubled what this allocated.
	n := 96 + len(r.URL) + len(r.Body) + strings.Count(r.Body, `"`) + strings.Count(r.Body, `\`)
	for k, v := range r.Headers {
		n += len(k) + len(v) + 6
	}
	b := make([]byte, 0, n)
	b = append(b, `{"method":`...)
	b = appendJSONString(b, r.Method, true)
	b = append(b, `,"url":`...)
	b = appendJSONString(b, r.URL, true)
	b = append(b, `,"headers":`...)
	if r.Headers == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		keys := make([]string, 0, 16) // on the stack, unlike slices.Sorted's
		for k := range r.Headers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k, true)
			b = append(b, ':')
			b = appendJSONString(b, r.Headers[k], true)
		}
		b = append(b, '}')
	}
	b = append(b, `,"body":`...)
	b = appendJSONString(b, r.Body, true)
	b = append(b, `,"body_truncated":`...)
	b = strconv.AppendBool(b, r.BodyTruncated)
	return append(b, '}')
}

// JSONString is JSON as the string an attempt row keeps, without copying
// the encoding a second time: nothing else holds the bytes, so they can
// back the string (as strings.Builder's do). The copy was 7 % of the bytes
// qhronosd allocates in a burst.
func (r *SentRequest) JSONString() string {
	b := r.JSON()
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// MethodPublish is the method a broker attempt's recorded request shows.
const MethodPublish = "PUBLISH"

// recordMessage is a broker message as its attempt keeps it: method
// PUBLISH, the broker URL by redact.URL, the message's headers (their
// names as the broker gets them, signatures hidden) and body. What the
// broker client adds on its own (a Kafka key, a NATS subject, a stream
// entry's fields) is not a header of the message and is not shown.
func recordMessage(red *redact.Redactor, url string, msg BrokerMessage) *SentRequest {
	out := &SentRequest{Method: MethodPublish, URL: red.URL(url), Headers: make(map[string]string, len(msg.Headers))}
	for name, value := range msg.Headers {
		out.Headers[name] = showHeader(red, name, value, false)
	}
	out.Body, out.BodyTruncated = cutBody(msg.Body)
	return out
}

// showHeader is one header value as recorded.
func showHeader(red *redact.Redactor, name, value string, configured bool) string {
	name = http.CanonicalHeaderKey(name)
	switch {
	case signatureHeaders[name]:
		return Redacted
	case configured:
		return red.Fingerprint(value)
	case qhronosHeaders[name]:
		return value
	case redact.CredentialName(name):
		return red.Fingerprint(value)
	}
	return value
}

// redactParamsBody shows an author's body as the event's page shows its
// params.body: unchanged (byte for byte) when nothing in it is a
// credential, else with credential members (JSON) or the whole (a form,
// a URL with query values) as fingerprints.
func redactParamsBody(red *redact.Redactor, body []byte) []byte {
	if len(body) == 0 {
		return body
	}
	if v, ok := redact.DecodeDocument(body); ok {
		shown := red.Document(v)
		if reflect.DeepEqual(v, shown) {
			return body
		}
		b, err := json.Marshal(shown)
		if err != nil {
			return []byte(red.Fingerprint(string(body)))
		}
		return b
	}
	return []byte(red.String(string(body)))
}

// cutBody keeps up to RequestBodyLimit bytes, cut at a character boundary.
func cutBody(b []byte) (string, bool) {
	if len(b) <= RequestBodyLimit {
		return string(b), false
	}
	n := RequestBodyLimit
	for n > RequestBodyLimit-utf8.UTFMax && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]), true
}
