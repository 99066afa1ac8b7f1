package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/input"
)

// versionETag is a versioned resource's strong validator: its id and
// version.
func versionETag(id string, version int64) string {
	return `"` + id + "-v" + strconv.FormatInt(version, 10) + `"`
}

// ifMatchVersion is the request's If-Match for a versioned resource (what names it
// in the error): nil without the header; otherwise a check that answers 412
// when the header names another version.
func ifMatchVersion[T any](c *gin.Context, what string, etag func(T) string) func(T) error {
	want := c.GetHeader("If-Match")
	if want == "" {
		return nil
	}
	return func(v T) error {
		if want == "*" {
			return nil
		}
		for _, tag := range strings.Split(want, ",") {
			if strings.TrimPrefix(strings.TrimSpace(tag), "W/") == etag(v) {
				return nil
			}
		}
		return &input.Error{Status: http.StatusPreconditionFailed,
			Message: "If-Match: the " + what + " has changed (current ETag " + etag(v) + ")"}
	}
}
