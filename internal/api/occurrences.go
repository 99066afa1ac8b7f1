package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

var occurrenceStatuses = input.Set(string(model.OccurrencePending), string(model.OccurrenceDispatching),
	string(model.OccurrenceRetrying), string(model.OccurrenceAwaitingAck),
	string(model.OccurrenceCompleted), string(model.OccurrenceFailed), string(model.OccurrenceMissed),
	string(model.OccurrenceCancelled), string(model.OccurrenceSkipped), string(model.OccurrenceRunning),
	string(model.OccurrenceTimedOut))

// occurrenceReasons are the reasons a listing may filter by.
var occurrenceReasons = func() map[string]bool {
	out := map[string]bool{model.ReasonBackfill: true, model.ReasonConcurrencyWait: true}
	for _, rs := range model.Reasons {
		for _, r := range rs {
			out[r] = true
		}
	}
	return out
}()

// occurrenceFilter builds the scoped filter of an occurrence listing.
func occurrenceFilter(c *gin.Context, q listQuery, now time.Time) (model.OccurrenceFilter, error) {
	f := model.OccurrenceFilter{AnyTags: q.anyTags, AllTags: q.allTags, From: q.from, To: q.to, Limit: q.limit}
	f.Scope, f.Unrestricted = principal(c).ScopeFilter()
	for _, st := range q.status {
		if !occurrenceStatuses[st] {
			return f, input.BadRequestf("status", "unknown occurrence status %q", st)
		}
		f.Status = append(f.Status, model.OccurrenceStatus(st))
	}
	reasons := splitList(c.Request.URL.Query()["reason"])
	if err := boundedList("reason", reasons); err != nil {
		return f, err
	}
	for _, r := range reasons {
		if !occurrenceReasons[r] {
			return f, input.BadRequestf("reason", "unknown reason %q", r)
		}
	}
	f.Reasons = reasons
	var cursor *occurrenceCursor
	if q.cursor != "" {
		cur, err := decodeOccurrenceCursor(q.cursor)
		if err != nil {
			return f, err
		}
		cursor, f.After = &cur, &cur.position
	}
	var err error
	if f.Order, f.Boundary, err = occurrenceOrder(q, cursor, now); err != nil {
		return f, err
	}
	if q.page > 0 {
		f.Offset = (q.page - 1) * q.limit
	}
	code, err := statusCodeParam(c.Query("status_code"))
	if err != nil {
		return f, err
	}
	f.StatusCode = code
	if v := c.Query("endpoint_id"); v != "" {
		if f.EndpointID, err = input.UUID("endpoint_id", v); err != nil {
			return f, err
		}
	}
	if v := strings.TrimSpace(c.Query("q")); v != "" {
		if len(v) > maxNameQuery {
			return f, input.BadRequestf("q", "at most %d bytes", maxNameQuery)
		}
		f.EventQuery = v
	}
	return f, nil
}

// eventOccurrences lists one event's occurrences, past and future, as a
// plain array: by default its history newest first, then what is to come,
// nearest first. A deleted event's history stays listable.
func (s *Server) eventOccurrences(c *gin.Context) error {
	ev, err := s.Events.Get(c.Request.Context(), principal(c), c.Param("id"), true)
	if err != nil {
		return err
	}
	q, err := parseListQuery(c, s.Now())
	if err != nil {
		return err
	}
	f, err := occurrenceFilter(c, q, s.Now())
	if err != nil {
		return err
	}
	f.EventID, f.Scope, f.Unrestricted = ev.ID, nil, true // visibility was checked on the event
	rows, err := s.Store.ListOccurrences(c.Request.Context(), f)
	if err != nil {
		return err
	}
	if len(rows) == q.limit && q.page == 0 {
		setNextLink(c, encodeOccurrenceCursor(f.Order, f.Boundary, &rows[len(rows)-1]))
	}
	c.JSON(http.StatusOK, toOccurrencesJSON(rows))
	return nil
}

// listOccurrences keeps the original {"data","pagination"} envelope.
func (s *Server) listOccurrences(c *gin.Context) error {
	q, err := parseListQuery(c, s.Now())
	if err != nil {
		return err
	}
	if archived, err := wantsArchived(c); err != nil {
		return err
	} else if archived {
		// The archive keeps no endpoint or name of a removed event to match.
		for _, k := range []string{"endpoint_id", "q"} {
			if c.Query(k) != "" {
				return input.BadRequestf(k, "cannot be combined with archived=true")
			}
		}
		return s.listArchivedOccurrences(c, q)
	}
	f, err := occurrenceFilter(c, q, s.Now())
	if err != nil {
		return err
	}
	if f.EventID, err = eventIDParam(c); err != nil {
		return err
	}
	ctx := c.Request.Context()
	rows, err := s.Store.ListOccurrences(ctx, f)
	if err != nil {
		return err
	}
	total := -1
	if q.cursor == "" {
		if total, err = s.Store.CountOccurrences(ctx, boundedCountFilter(f)); err != nil {
			return err
		}
	}
	var last *model.Occurrence
	if len(rows) == q.limit {
		last = &rows[len(rows)-1]
	}
	writeOccurrencePage(c, q, f, toOccurrencesJSON(rows), total, last)
	return nil
}

// maxCountedTotal bounds the total of page-based listings: beyond it the
// answer says "at least this many" (total_is_lower_bound) instead of
// counting the whole history on every page.
const maxCountedTotal = 10_000

// boundedCountFilter is a listing's filter for its bounded total: every
// page, not from the cursor on.
func boundedCountFilter(f model.OccurrenceFilter) model.OccurrenceFilter {
	f.After, f.CountBound = nil, maxCountedTotal
	return f
}

// writeOccurrencePage answers in the original {"data","pagination"}
// envelope; last, when the page is full, gives the next cursor. The
// page-based form (no cursor: the first page or ?page=) carries the
// original's page and total, counted up to maxCountedTotal; cursor pages,
// our native form, carry no total (total < 0) and cost the same at any depth.
func writeOccurrencePage(c *gin.Context, q listQuery, f model.OccurrenceFilter, data any, total int,
	last *model.Occurrence) {
	pagination := gin.H{"limit": q.limit}
	if total >= 0 {
		pagination["page"] = max(q.page, 1)
		pagination["total"] = min(total, maxCountedTotal)
		pagination["total_is_lower_bound"] = total > maxCountedTotal
	}
	if last != nil {
		next := encodeOccurrenceCursor(f.Order, f.Boundary, last)
		pagination["next_cursor"] = next
		if q.page == 0 {
			setNextLink(c, next)
		}
	}
	c.JSON(http.StatusOK, gin.H{"data": data, "pagination": pagination})
}

// visibleOccurrence loads an occurrence whose event the principal may read.
func (s *Server) visibleOccurrence(c *gin.Context) (model.Occurrence, error) {
	return s.Events.Occurrence(c.Request.Context(), principal(c), c.Param("id"))
}

func (s *Server) getOccurrence(c *gin.Context) error {
	occ, err := s.visibleOccurrence(c)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, toOccurrenceJSON(&occ))
	return nil
}

func (s *Server) occurrenceAttempts(c *gin.Context) error {
	occ, err := s.visibleOccurrence(c)
	if err != nil {
		return err
	}
	attempts, err := s.Store.ListAttempts(c.Request.Context(), occ.ID)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, toAttemptsJSON(attempts))
	return nil
}

// statusCodeParam parses the optional status_code filter: an HTTP status
// code from 100 to 599.
func statusCodeParam(v string) (*int, error) {
	if v == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 100 || n > 599 {
		return nil, input.BadRequest("status_code", "must be an HTTP status code between 100 and 599")
	}
	return &n, nil
}

// eventIDParam reads the optional event_id filter (a uuid, any case).
func eventIDParam(c *gin.Context) (string, error) {
	v := c.Query("event_id")
	if v == "" {
		return "", nil
	}
	return input.UUID("event_id", v)
}
