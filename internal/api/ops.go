package api

import (
	"encoding/json"
	"net/http"
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
	// defaultStatsWindow is the window of GET /stats without since.
	defaultStatsWindow = 24 * time.Hour
	// maxStatsWindow bounds the attempts the percentiles sort.
	maxStatsWindow = 31 * 24 * time.Hour
	// Bulk retry: default and maximum matches, rows per transaction.
	defaultRetryLimit = 1000
	maxRetryLimit     = 10000
	retryBatchSize    = 500
)

// stats answers GET /stats?since=&until= over what the principal can read.
func (s *Server) stats(c *gin.Context) error {
	values := c.Request.URL.Query()
	now := s.Now()
	since, err := timeParam(values, "since", "from", now)
	if err != nil {
		return err
	}
	until, err := timeParam(values, "until", "to", now)
	if err != nil {
		return err
	}
	f := model.StatsFilter{Now: now, Until: now}
	if until != nil {
		f.Until = *until
	}
	f.Since = f.Until.Add(-defaultStatsWindow)
	if since != nil {
		f.Since = *since
	}
	if !f.Since.Before(f.Until) {
		return input.BadRequest("since", "must be before until")
	}
	if f.Until.Sub(f.Since) > maxStatsWindow {
		return input.BadRequestf("since", "the window may span at most %d days", int(maxStatsWindow/(24*time.Hour)))
	}
	if v := values.Get("by_action"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return input.BadRequest("by_action", "must be true or false")
		}
		f.TotalOnly = !b
	}
	f.Scope, f.Unrestricted = principal(c).ScopeFilter()
	st, err := s.Store.Stats(c.Request.Context(), f)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, st)
	return nil
}

// retryOccurrence re-delivers one terminal occurrence: 404 when the
// principal cannot read it, 403 when it may read but not modify its event,
// 409 when it is not terminal.
//
// A fan-out occurrence replays its failed deliveries; with a body
// {"subscription_id": …} it replays that subscription's delivery alone,
// which the subscription's owner may ask for too.
func (s *Server) retryOccurrence(c *gin.Context) error {
	subscriptionID, err := replaySubscription(c)
	if err != nil {
		return err
	}
	var got model.Occurrence
	if subscriptionID != "" {
		got, err = s.Events.ReplayDelivery(c.Request.Context(), principal(c), c.Param("id"), subscriptionID)
	} else {
		got, err = s.Events.Replay(c.Request.Context(), principal(c), c.Param("id"))
	}
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, toOccurrenceJSON(&got))
	return nil
}

// retryRequest is the body of POST /occurrences/retry.
type retryRequest struct {
	EventID string   `json:"event_id"`
	Tags    []string `json:"tags"`
	Status  []string `json:"status"`
	Since   *string  `json:"since"`
	Until   *string  `json:"until"`
	Limit   *int     `json:"limit"`
	// StatusCode keeps occurrences whose last attempt answered it.
	StatusCode *int `json:"status_code"`
}

var retryFields = input.Set("event_id", "tags", "status", "since", "until", "limit", "status_code")

// retryOccurrences re-queues every terminal occurrence matching the filter
// among the events the principal may modify, in bounded batches.
func (s *Server) retryOccurrences(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	if err := input.RejectUnknown(members, retryFields, nil); err != nil {
		return err
	}
	var req retryRequest
	for name, dst := range map[string]any{"event_id": &req.EventID, "tags": &req.Tags, "since": &req.Since,
		"until": &req.Until, "limit": &req.Limit, "status_code": &req.StatusCode} {
		if _, err := input.DecodeField(members, name, dst); err != nil {
			return err
		}
	}
	if raw, ok := members["status"]; ok {
		req.Status, err = decodeStatusList(raw)
		if err != nil {
			return err
		}
	}
	if req.EventID != "" {
		if req.EventID, err = input.UUID("event_id", req.EventID); err != nil {
			return err
		}
	}
	if err := boundedList("tags", req.Tags); err != nil {
		return err
	}
	if err := boundedList("status", req.Status); err != nil {
		return err
	}
	now := s.Now()
	from, err := instantMember("since", req.Since, now)
	if err != nil {
		return err
	}
	to, err := instantMember("until", req.Until, now)
	if err != nil {
		return err
	}
	f := model.RetryFilter{EventID: req.EventID, AnyTags: req.Tags, From: from, To: to,
		StatusCode: req.StatusCode, Limit: defaultRetryLimit, BatchSize: retryBatchSize}
	if req.StatusCode != nil && (*req.StatusCode < 100 || *req.StatusCode > 599) {
		return input.BadRequest("status_code", "must be an HTTP status code between 100 and 599")
	}
	if req.Limit != nil {
		if *req.Limit < 1 {
			return input.BadRequest("limit", "must be a positive integer")
		}
		if *req.Limit > maxRetryLimit {
			return input.BadRequestf("limit", "must be at most %d", maxRetryLimit)
		}
		f.Limit = *req.Limit
	}
	for _, st := range req.Status {
		os := model.OccurrenceStatus(st)
		if !occurrenceStatuses[st] {
			return input.BadRequestf("status", "unknown occurrence status %q", st)
		}
		if !os.Terminal() {
			return input.BadRequestf("status", "%q is not terminal; only completed, failed, missed or cancelled can be retried", st)
		}
		f.Status = append(f.Status, os)
	}
	if f.From != nil && f.To != nil && !f.From.Before(*f.To) {
		return input.BadRequest("since", "must be before until")
	}
	res, err := s.Events.ReplayMany(c.Request.Context(), principal(c), f)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, res)
	return nil
}

// decodeStatusList accepts "failed", "failed,missed" or ["failed","missed"].
func decodeStatusList(raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return splitList([]string{one}), nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, input.BadRequest("status", "must be a string or an array of strings")
	}
	return splitList(many), nil
}

// archivedOccurrenceJSON is an occurrence read from the archive.
type archivedOccurrenceJSON struct {
	occurrenceJSON
	Archived   bool      `json:"archived"`
	ArchivedAt time.Time `json:"archived_at"`
}

// listArchivedOccurrences answers GET /occurrences?archived=true with the
// same filters, paging and envelope as the live listing; the scope applies
// through the archived event's tags.
func (s *Server) listArchivedOccurrences(c *gin.Context, q listQuery) error {
	f, err := occurrenceFilter(c, q, s.Now())
	if err != nil {
		return err
	}
	if f.EventID, err = eventIDParam(c); err != nil {
		return err
	}
	ctx := c.Request.Context()
	rows, err := s.Store.ListArchivedOccurrences(ctx, f)
	if err != nil {
		return err
	}
	total := -1
	if q.cursor == "" {
		if total, err = s.Store.CountArchivedOccurrences(ctx, boundedCountFilter(f)); err != nil {
			return err
		}
	}
	data := make([]archivedOccurrenceJSON, 0, len(rows))
	for i := range rows {
		data = append(data, archivedOccurrenceJSON{occurrenceJSON: toOccurrenceJSON(&rows[i].Occurrence),
			Archived: true, ArchivedAt: rows[i].ArchivedAt})
	}
	var last *model.Occurrence
	if len(rows) == q.limit {
		last = &rows[len(rows)-1].Occurrence
	}
	writeOccurrencePage(c, q, f, data, total, last)
	return nil
}

// wantsArchived reports whether a listing asks for the archive
// (archived=true).
func wantsArchived(c *gin.Context) (bool, error) {
	v := c.Query("archived")
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, input.BadRequest("archived", "must be true or false")
	}
	return b, nil
}

// instantMember reads an optional instant member of a body with the shared
// parser (RFC 3339, "in 2 hours", "today at 9am"; UTC).
func instantMember(field string, text *string, now time.Time) (*time.Time, error) {
	if text == nil {
		return nil, nil
	}
	t, err := recurrence.ParseInstant(field, *text, time.UTC, now)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// replaySubscription reads the optional body of POST /occurrences/{id}/retry:
// empty, or {"subscription_id": "<uuid>"}.
func replaySubscription(c *gin.Context) (string, error) {
	if c.Request.ContentLength == 0 {
		return "", nil
	}
	members, body, err := readObject(c)
	if err != nil {
		if len(body) == 0 {
			return "", nil
		}
		return "", err
	}
	if err := input.RejectUnknown(members, input.Set("subscription_id"), nil); err != nil {
		return "", err
	}
	raw, ok := members["subscription_id"]
	if !ok || input.IsNull(raw) {
		return "", nil
	}
	var id string
	if json.Unmarshal(raw, &id) != nil || uuid.Validate(id) != nil || len(id) != 36 {
		return "", input.BadRequest("subscription_id", "must be a subscription's id (a UUID)")
	}
	return strings.ToLower(id), nil
}
