package api

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
)

const (
	defaultLimit = 50
	maxLimit     = 500
)

// listQuery is the common query of list routes.
type listQuery struct {
	anyTags, allTags []string
	status           []string
	from, to         *time.Time
	limit            int
	cursor           string
	page             int // 1-based; 0 when not given
}

func parseListQuery(c *gin.Context) (listQuery, error) {
	q := listQuery{limit: defaultLimit}
	values := c.Request.URL.Query()
	q.anyTags = splitList(values["tags"])
	q.allTags = splitList(values["tags_all"])
	q.status = splitList(values["status"])
	for field, list := range map[string][]string{"tags": q.anyTags, "tags_all": q.allTags, "status": q.status} {
		if err := boundedList(field, list); err != nil {
			return q, err
		}
	}
	var err error
	if q.from, err = timeParam(values, "from", "since"); err != nil {
		return q, err
	}
	if q.to, err = timeParam(values, "to", "until"); err != nil {
		return q, err
	}
	if v := values.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return q, badRequest("limit", "must be a positive integer")
		}
		q.limit = min(n, maxLimit)
	}
	if v := values.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			return q, badRequest("page", "must be a positive integer")
		}
		q.page = n
	}
	q.cursor = values.Get("cursor")
	if q.cursor != "" && q.page != 0 {
		return q, badRequest("cursor", "cannot be combined with page")
	}
	return q, nil
}

// splitList merges repeated and comma-separated values.
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// timeParam reads an RFC 3339 parameter under its name or its alias.
func timeParam(values url.Values, name, alias string) (*time.Time, error) {
	field, v := name, values.Get(name)
	if v == "" {
		field, v = alias, values.Get(alias)
	}
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, badRequestf(field, "must be an RFC 3339 time, e.g. 2030-01-02T15:04:05Z")
	}
	return &t, nil
}

// Cursors are opaque to clients: base64 of "<unix-micro>|<id>".
func encodeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%d|%s", at.UnixMicro(), id)))
}

// Instants a cursor may carry: the years every backend can store.
var (
	minCursorMicros = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxCursorMicros = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
)

// decodeCursor refuses, with 400, anything the server could not have
// issued: a forged instant outside the storable years or an id that is not
// a uuid would otherwise reach the database as an error.
func decodeCursor(s string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		micros, id, ok := strings.Cut(string(b), "|")
		n, perr := strconv.ParseInt(micros, 10, 64)
		if ok && perr == nil && n >= minCursorMicros && n <= maxCursorMicros && uuid.Validate(id) == nil {
			return time.UnixMicro(n).UTC(), id, nil
		}
	}
	return time.Time{}, "", badRequest("cursor", "is not a cursor this server issued")
}

// maxFilterValues bounds every list filter (tags, tags_all, status): a
// filter is a few values, and each becomes a query parameter.
const maxFilterValues = 100

// boundedList refuses a filter list longer than maxFilterValues.
func boundedList(field string, list []string) error {
	if len(list) > maxFilterValues {
		return badRequestf(field, "at most %d values", maxFilterValues)
	}
	return nil
}

// setNextLink advertises the next page in a Link header.
func setNextLink(c *gin.Context, cursor string) {
	u := *c.Request.URL
	q := u.Query()
	q.Set("cursor", cursor)
	q.Del("page")
	u.RawQuery = q.Encode()
	c.Header("Link", fmt.Sprintf(`<%s>; rel="next"`, u.RequestURI()))
}
