package api

import (
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

// maxPunctualityTolerance bounds GET /stats/punctuality's tolerance.
const maxPunctualityTolerance = 24 * time.Hour

// punctuality answers GET /stats/punctuality?from=&to=&group_by=&tolerance=&tag=:
// how the instants scheduled in the window went, per event, endpoint or
// tag, over what the principal can read. The window (default: the last 7
// days) spans at most 366 days and is widened to whole hours, or whole UTC
// days beyond 48 hours; its trend is hourly up to 48 hours, daily beyond.
func (s *Server) punctuality(c *gin.Context) error {
	f, err := PunctualityFilter(c.Request.URL.Query(), s.Now())
	if err != nil {
		return err
	}
	f.Scope, f.Unrestricted = principal(c).ScopeFilter()
	out, err := s.Store.Punctuality(c.Request.Context(), f)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// PunctualityFilter reads a punctuality report's query (the API's and the
// console's): from, to, group_by, tolerance and tags; the scope is the
// caller's to set.
func PunctualityFilter(q url.Values, now time.Time) (model.PunctualityFilter, error) {
	f := model.PunctualityFilter{Now: now, GroupBy: model.PunctualityByEvent, Tolerance: time.Second}
	switch g := model.PunctualityGroupBy(q.Get("group_by")); g {
	case "":
	case model.PunctualityByEvent, model.PunctualityByEndpoint, model.PunctualityByTag:
		f.GroupBy = g
	default:
		return f, input.BadRequest("group_by", `must be one of "event", "endpoint", "tag"`)
	}
	if t := q.Get("tolerance"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d < 0 || d > maxPunctualityTolerance {
			return f, input.BadRequest("tolerance", `must be a duration from "0s" to "24h", like "1s" or "250ms"`)
		}
		f.Tolerance = d
	}
	for _, tag := range q["tag"] {
		if tag == "" {
			return f, input.BadRequest("tag", "must not be empty")
		}
		f.Tags = append(f.Tags, tag)
	}
	to, err := timeParam(q, "to", "until", now)
	if err != nil {
		return f, err
	}
	from, err := timeParam(q, "from", "since", now)
	if err != nil {
		return f, err
	}
	end := now
	if to != nil {
		end = *to
	}
	start := end.Add(-7 * 24 * time.Hour)
	if from != nil {
		start = *from
	}
	if !start.Before(end) {
		return f, input.BadRequest("from", "must be before to")
	}
	// Compared as instants: a span of centuries would overflow a Duration.
	if start.Before(end.Add(-model.MaxPunctualityWindow)) {
		return f, input.BadRequest("from", "the window may span at most 366 days")
	}
	f.From = start.UTC().Truncate(time.Hour)
	f.To = end.UTC().Add(time.Hour - time.Nanosecond).Truncate(time.Hour)
	f.TrendStep = time.Hour
	if f.To.Sub(f.From) > 48*time.Hour {
		// A daily trend reads whole days: a row per event and day, where
		// partial days at both ends would read up to 46 rows per event.
		f.TrendStep = 24 * time.Hour
		f.From = f.From.Truncate(24 * time.Hour)
		f.To = f.To.Add(24*time.Hour - time.Nanosecond).Truncate(24 * time.Hour)
	}
	return f, nil
}
