package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/model"
)

// historyEntryJSON is one entry of an event's history.
type historyEntryJSON struct {
	ID      string          `json:"id"`
	At      time.Time       `json:"at"`
	Subject string          `json:"subject"`
	Channel string          `json:"channel"`
	Action  string          `json:"action"`
	Reason  string          `json:"reason"`
	Changes json.RawMessage `json:"changes"`
}

// eventHistory answers GET /events/{id}/history: who changed the event, how
// and when, oldest first, in pages of limit with a next_cursor while more
// follow. include_deleted=true reaches a deleted or archived event.
func (s *Server) eventHistory(c *gin.Context) error {
	includeDeleted, err := boolParam(c, "include_deleted")
	if err != nil {
		return err
	}
	q, err := parseListQuery(c, s.Now())
	if err != nil {
		return err
	}
	f := model.HistoryFilter{Limit: q.limit + 1} // one more tells whether a next page exists
	if q.cursor != "" {
		at, id, err := decodeCursor(q.cursor)
		if err != nil {
			return err
		}
		f.After = &model.HistoryCursor{At: at, ID: id}
	}
	entries, err := s.Events.History(c.Request.Context(), principal(c), c.Param("id"), includeDeleted, f)
	if err != nil {
		return err
	}
	entries, pagination := nextPage(c, entries, q.limit, func(last *model.HistoryEntry) string { return encodeCursor(last.At, last.ID) })
	data := make([]historyEntryJSON, 0, len(entries))
	for _, e := range entries {
		changes := e.Changes
		if len(changes) == 0 {
			changes = json.RawMessage("null")
		}
		data = append(data, historyEntryJSON{ID: e.ID, At: e.At, Subject: e.Subject, Channel: e.Channel,
			Action: e.Action, Reason: e.Reason, Changes: changes})
	}
	c.JSON(http.StatusOK, gin.H{"data": data, "pagination": pagination})
	return nil
}
