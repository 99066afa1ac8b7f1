package actions

import (
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Limits on user-supplied apicall headers.
const (
	maxHeaders     = 64
	maxHeaderBytes = 16 << 10
)

// forbiddenHeaders control framing or the connection: letting a user set them
// enables request smuggling or lies about the body. Proxy-* is refused by
// prefix.
var forbiddenHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true,
	"Keep-Alive": true, "Te": true, "Trailer": true, "Upgrade": true,
}

// reservedHeaders are set by Qhronos on every apicall (Idempotency-Key) or
// when signing; a user value would make them lie.
var reservedHeaders = map[string]bool{
	"Idempotency-Key": true,
	http.CanonicalHeaderKey(HeaderQhronosSignature):    true,
	http.CanonicalHeaderKey(HeaderQhronosSignatureNew): true,
	http.CanonicalHeaderKey(HeaderWebhookID):           true,
	http.CanonicalHeaderKey(HeaderWebhookTimestamp):    true,
	http.CanonicalHeaderKey(HeaderWebhookSignature):    true,
}

// ValidateHeaders refuses header names and values that would break or
// smuggle a request, or that Qhronos sets itself. Errors are *ParamError
// naming the header (headers.<Name>); an endpoint's headers follow the same
// rules as an apicall's.
func ValidateHeaders(h map[string]string) error {
	if len(h) > maxHeaders {
		return &ParamError{Param: "headers", Reason: "too many headers (at most 64)"}
	}
	size := 0
	seen := make(map[string]bool, len(h))
	for name, value := range h {
		param := "headers." + name
		size += len(name) + len(value)
		if strings.ContainsAny(name, "\r\n\x00") || strings.ContainsAny(value, "\r\n\x00") {
			return &ParamError{Param: param, Reason: "must not contain CR, LF or NUL"}
		}
		if !httpguts.ValidHeaderFieldName(name) {
			return &ParamError{Param: param, Reason: "invalid header name"}
		}
		if !httpguts.ValidHeaderFieldValue(value) {
			return &ParamError{Param: param, Reason: "invalid header value"}
		}
		canon := http.CanonicalHeaderKey(name)
		if forbiddenHeaders[canon] || strings.HasPrefix(canon, "Proxy-") {
			return &ParamError{Param: param, Reason: "hop-by-hop or framing header not allowed"}
		}
		if reservedHeaders[canon] {
			return &ParamError{Param: param, Reason: "set by Qhronos, not allowed"}
		}
		if seen[canon] {
			return &ParamError{Param: param, Reason: "given twice (header names are case-insensitive)"}
		}
		seen[canon] = true
	}
	if size > maxHeaderBytes {
		return &ParamError{Param: "headers", Reason: "larger than 16 KiB"}
	}
	return nil
}
