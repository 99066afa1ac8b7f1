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
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
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
	order            string
}

func parseListQuery(c *gin.Context, now time.Time) (listQuery, error) {
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
	if q.from, err = timeParam(values, "from", "since", now); err != nil {
		return q, err
	}
	if q.to, err = timeParam(values, "to", "until", now); err != nil {
		return q, err
	}
	if v := values.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return q, input.BadRequest("limit", "must be a positive integer")
		}
		q.limit = min(n, maxLimit)
	}
	if v := values.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			return q, input.BadRequest("page", "must be a positive integer")
		}
		q.page = n
	}
	q.order = values.Get("order")
	q.cursor = values.Get("cursor")
	if q.cursor != "" && q.page != 0 {
		return q, input.BadRequest("cursor", "cannot be combined with page")
	}
	return q, nil
}

// boolParam reads an optional true/false query parameter.
func boolParam(c *gin.Context, name string) (bool, error) {
	v := c.Query(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, input.BadRequest(name, "must be true or false")
	}
	return b, nil
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

// timeParam reads an instant parameter under its name or its alias, in any
// form the shared parser reads (RFC 3339, "in 2 hours", "today at 9am"; UTC).
func timeParam(values url.Values, name, alias string, now time.Time) (*time.Time, error) {
	field, v := name, values.Get(name)
	if v == "" {
		field, v = alias, values.Get(alias)
	}
	if v == "" {
		return nil, nil
	}
	t, err := recurrence.ParseInstant(field, v, time.UTC, now)
	if err != nil {
		return nil, err
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
	return time.Time{}, "", input.BadRequest("cursor", "is not a cursor this server issued")
}

// An occurrence cursor names its order, and for the default order its
// segment and the boundary between history and upcoming rows, so that a
// listing pages through one consistent split however long the client takes:
//
//	h|<boundary>|<unix-micro>|<id>   default order, in the history
//	u|<boundary>|<unix-micro>|<id>   default order, in the upcoming rows
//	a|<unix-micro>|<id>              order=scheduled_at
//	d|<unix-micro>|<id>              order=-scheduled_at
//	<unix-micro>|<id>                issued before the default order changed:
//	                                 continues newest first, as it was issued
type occurrenceCursor struct {
	order    model.OccurrenceOrder
	boundary time.Time
	position model.OccurrenceCursor
}

func encodeOccurrenceCursor(order model.OccurrenceOrder, boundary time.Time, last *model.Occurrence) string {
	var s string
	switch {
	case order == model.OldestFirst:
		s = fmt.Sprintf("a|%d|%s", last.ScheduledAt.UnixMicro(), last.ID)
	case order == model.HistoryFirst:
		segment := "h"
		if last.ScheduledAt.After(boundary) {
			segment = "u"
		}
		s = fmt.Sprintf("%s|%d|%d|%s", segment, boundary.UnixMicro(), last.ScheduledAt.UnixMicro(), last.ID)
	default:
		s = fmt.Sprintf("d|%d|%s", last.ScheduledAt.UnixMicro(), last.ID)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

// decodeOccurrenceCursor accepts what encodeOccurrenceCursor and the
// earlier encodeCursor issued; anything else is 400.
func decodeOccurrenceCursor(s string) (occurrenceCursor, error) {
	bad := input.BadRequest("cursor", "is not a cursor this server issued")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return occurrenceCursor{}, bad
	}
	parts := strings.Split(string(b), "|")
	var c occurrenceCursor
	switch {
	case len(parts) == 2:
		c.order = model.NewestFirst
	case len(parts) == 3 && parts[0] == "a":
		c.order, parts = model.OldestFirst, parts[1:]
	case len(parts) == 3 && parts[0] == "d":
		c.order, parts = model.NewestFirst, parts[1:]
	case len(parts) == 4 && (parts[0] == "h" || parts[0] == "u"):
		boundary, ok := cursorInstant(parts[1])
		if !ok {
			return occurrenceCursor{}, bad
		}
		c.order, c.boundary, c.position.Upcoming = model.HistoryFirst, boundary, parts[0] == "u"
		parts = parts[2:]
	default:
		return occurrenceCursor{}, bad
	}
	at, ok := cursorInstant(parts[0])
	if !ok || uuid.Validate(parts[1]) != nil {
		return occurrenceCursor{}, bad
	}
	// A position on the wrong side of its own boundary is forged.
	if c.order == model.HistoryFirst && at.After(c.boundary) != c.position.Upcoming {
		return occurrenceCursor{}, bad
	}
	c.position.ScheduledAt, c.position.ID = at, parts[1]
	return c, nil
}

// cursorInstant parses a cursor's unix-micro instant within the storable
// years.
func cursorInstant(s string) (time.Time, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < minCursorMicros || n > maxCursorMicros {
		return time.Time{}, false
	}
	return time.UnixMicro(n).UTC(), true
}

// occurrenceOrders are the values of an occurrence listing's order.
var occurrenceOrders = map[string]model.OccurrenceOrder{
	"scheduled_at": model.OldestFirst, "-scheduled_at": model.NewestFirst}

// occurrenceOrder decides a listing's order: the cursor's when paging on
// (an explicit order must agree with it), else the order parameter, else
// newest first when from/to bound the listing, else history first split at
// now.
func occurrenceOrder(q listQuery, cursor *occurrenceCursor, now time.Time) (model.OccurrenceOrder, time.Time, error) {
	explicit, named := occurrenceOrders[q.order]
	if q.order != "" && !named {
		return 0, time.Time{}, input.BadRequest("order", `must be "scheduled_at" or "-scheduled_at"`)
	}
	switch {
	case cursor != nil:
		if named && explicit != cursor.order {
			return 0, time.Time{}, input.BadRequest("cursor", "was issued for another order")
		}
		return cursor.order, cursor.boundary, nil
	case named:
		return explicit, time.Time{}, nil
	case q.from != nil || q.to != nil:
		return model.NewestFirst, time.Time{}, nil
	default:
		return model.HistoryFirst, now.UTC().Truncate(time.Microsecond), nil
	}
}

// maxFilterValues bounds every list filter (tags, tags_all, status): a
// filter is a few values, and each becomes a query parameter.
const maxFilterValues = 100

// boundedList refuses a filter list longer than maxFilterValues.
func boundedList(field string, list []string) error {
	if len(list) > maxFilterValues {
		return input.BadRequestf(field, "at most %d values", maxFilterValues)
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

// nextPage trims items, read with limit+1 to learn whether more follow, to
// one page; when more follow it names the next page in pagination (the
// cursor that next makes of the last item kept) and in the Link header.
func nextPage[T any](c *gin.Context, items []T, limit int, next func(last *T) string) ([]T, gin.H) {
	pagination := gin.H{"limit": limit}
	if len(items) > limit {
		items = items[:limit]
		cursor := next(&items[len(items)-1])
		pagination["next_cursor"] = cursor
		setNextLink(c, cursor)
	}
	return items, pagination
}
