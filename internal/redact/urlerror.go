package redact

import (
	"errors"
	"net/url"
)

// withheldHost stands for a URL whose host cannot be read.
const withheldHost = "(url withheld)"

// Host is what of a URL may be logged: its host (and port), never its
// userinfo, path or query, which may carry credentials.
func Host(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return withheldHost
	}
	return u.Host
}

// URLError cuts the URL of a *url.Error in err's chain (net/http's client
// errors and url.Parse's all are one) to its host, so wrapping and logging
// err shows where a request went but not the path, query or userinfo.
// Call it where an outbound error is first wrapped: a message formatted
// from err keeps whatever err said. Unwrap still reaches the cause.
func URLError(err error) error {
	var ue *url.Error
	if err == nil || !errors.As(err, &ue) {
		return err
	}
	// A wrapped url.Error's URL is already in the outer message: only the
	// url.Error itself, rebuilt, is kept.
	return &url.Error{Op: ue.Op, URL: Host(ue.URL), Err: ue.Err}
}
