package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/model"
)

// circuitEntryJSON is one transition of an endpoint's circuit.
type circuitEntryJSON struct {
	ID                  string    `json:"id"`
	At                  time.Time `json:"at"`
	Change              string    `json:"change"`
	FromState           string    `json:"from_state"`
	ToState             string    `json:"to_state"`
	Reason              string    `json:"reason"`
	ConsecutiveFailures int       `json:"consecutive_failures"`
	Subject             string    `json:"subject"`
	Channel             string    `json:"channel"`
}

// sentNoticeJSON is one notice sent to a notification channel.
type sentNoticeJSON struct {
	ID      string    `json:"id"`
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Summary string    `json:"summary"`
	Outcome string    `json:"outcome"`
	Answer  string    `json:"answer"`
	Test    bool      `json:"test"`
}

// newestFirstPage reads a newest-first listing's limit and cursor (the
// conventions of the other lists: limit, cursor, 400 naming the field).
func (s *Server) newestFirstPage(c *gin.Context) (limit int, before *model.PageCursor, err error) {
	q, err := parseListQuery(c, s.Now())
	if err != nil {
		return 0, nil, err
	}
	if q.cursor != "" {
		at, id, err := decodeCursor(q.cursor)
		if err != nil {
			return 0, nil, err
		}
		before = &model.PageCursor{At: at, ID: id}
	}
	return q.limit, before, nil
}

// answerPage writes a page of rows fetched with one more than limit: the
// extra one says a next page exists, whose cursor is the last row shown.
func answerPage[T any](c *gin.Context, rows []T, limit int, key func(T) (time.Time, string), data []any) {
	pagination := gin.H{"limit": limit}
	if len(rows) > limit {
		at, id := key(rows[limit-1])
		next := encodeCursor(at, id)
		pagination["next_cursor"] = next
		setNextLink(c, next)
		data = data[:limit]
	}
	c.JSON(http.StatusOK, gin.H{"data": data, "pagination": pagination})
}

// endpointCircuitHistory answers GET /endpoints/{id}/circuit-history: the
// endpoint's circuit transitions, newest first, in pages of limit with a
// next_cursor while more follow. It needs the right to read the endpoint.
func (s *Server) endpointCircuitHistory(c *gin.Context) error {
	limit, before, err := s.newestFirstPage(c)
	if err != nil {
		return err
	}
	rows, err := s.Events.CircuitHistory(c.Request.Context(), principal(c), c.Param("id"), before, limit+1)
	if err != nil {
		return err
	}
	data := make([]any, 0, len(rows))
	for _, e := range rows {
		data = append(data, circuitEntryJSON{ID: e.ID, At: e.At, Change: e.Change, FromState: string(e.From),
			ToState: string(e.To), Reason: e.Reason, ConsecutiveFailures: e.ConsecutiveFailures, Subject: e.Subject,
			Channel: e.Channel})
	}
	answerPage(c, rows, limit, func(e model.CircuitEntry) (time.Time, string) { return e.At, e.ID }, data)
	return nil
}

// notificationChannelNotices answers GET /notification-channels/{id}/notices:
// the notices sent to the channel (tests included), newest first, paged
// like the other lists.
func (s *Server) notificationChannelNotices(c *gin.Context) error {
	limit, before, err := s.newestFirstPage(c)
	if err != nil {
		return err
	}
	rows, err := s.Notifications.Notices(c.Request.Context(), c.Param("id"), before, limit+1)
	if err != nil {
		return err
	}
	data := make([]any, 0, len(rows))
	for _, n := range rows {
		data = append(data, sentNoticeJSON{ID: n.ID, At: n.At, Kind: n.Kind, Summary: n.Summary, Outcome: n.Outcome,
			Answer: n.Answer, Test: n.Test})
	}
	answerPage(c, rows, limit, func(n model.SentNotice) (time.Time, string) { return n.At, n.ID }, data)
	return nil
}
