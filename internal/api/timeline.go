package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

// timelineSteps are the bucket widths GET /stats/timeline accepts.
var timelineSteps = map[string]time.Duration{
	"1m": time.Minute, "5m": 5 * time.Minute, "15m": 15 * time.Minute, "1h": time.Hour,
}

// timeline answers GET /stats/timeline?since=&until=&step=: attempts per
// bucket (completed, failed) and the lateness percentiles of first
// scheduled attempts, over what the principal can read. The window is
// aligned down to the step; at most model.MaxTimelineBuckets buckets.
func (s *Server) timeline(c *gin.Context) error {
	values, now := c.Request.URL.Query(), s.Now()
	stepText := values.Get("step")
	if stepText == "" {
		stepText = "1m"
	}
	step, ok := timelineSteps[stepText]
	if !ok {
		return input.BadRequest("step", `must be one of "1m", "5m", "15m", "1h"`)
	}
	since, err := timeParam(values, "since", "from", now)
	if err != nil {
		return err
	}
	until, err := timeParam(values, "until", "to", now)
	if err != nil {
		return err
	}
	end := now
	if until != nil {
		end = *until
	}
	start := end.Add(-time.Hour)
	if since != nil {
		start = *since
	}
	if !start.Before(end) {
		return input.BadRequest("since", "must be before until")
	}
	start = start.UTC().Truncate(step)
	// Compared as instants before any subtraction: end.Sub(start) saturates
	// for windows over 292 years, and the bucket count would overflow.
	if start.Before(end.Add(-time.Duration(model.MaxTimelineBuckets) * step)) {
		return input.BadRequestf("since", "the window may span at most %d steps of %s", model.MaxTimelineBuckets, stepText)
	}
	buckets := int((end.Sub(start) + step - 1) / step)
	f := model.TimelineFilter{Since: start, Step: step, Buckets: buckets}
	f.Scope, f.Unrestricted = principal(c).ScopeFilter()
	out, err := s.Store.Timeline(c.Request.Context(), f)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"since": start, "until": start.Add(time.Duration(buckets) * step), "step": stepText,
		"buckets": out})
	return nil
}
