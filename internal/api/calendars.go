package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/model"
)

// calendarJSON is the calendar resource.
type calendarJSON struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	Timezone      string            `json:"timezone"`
	Dates         []string          `json:"dates"`
	Ranges        []model.DateRange `json:"ranges"`
	RRules        []string          `json:"rrules"`
	Tags          []string          `json:"tags"`
	Version       int64             `json:"version"`
	CreatedBy     string            `json:"created_by"`
	CreatedAt     time.Time         `json:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at"`
	ReplanPending bool              `json:"replan_pending"`
}

func toCalendarJSON(c *model.Calendar) calendarJSON {
	out := calendarJSON{ID: c.ID, Name: c.Name, Timezone: c.Timezone, Dates: c.Dates, Ranges: c.Ranges,
		RRules: c.RRules, Tags: c.Tags, Version: c.Version, CreatedBy: c.CreatedBy, CreatedAt: c.CreatedAt,
		UpdatedAt: c.UpdatedAt, ReplanPending: c.ReplanRequestedAt != nil}
	if out.Dates == nil {
		out.Dates = []string{}
	}
	if out.Ranges == nil {
		out.Ranges = []model.DateRange{}
	}
	if out.RRules == nil {
		out.RRules = []string{}
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	return out
}

// calendarETag is the calendar's strong validator: its id and version.
func calendarETag(c *model.Calendar) string { return versionETag(c.ID, c.Version) }

// calendarIfMatch is the request's If-Match for a calendar.
func calendarIfMatch(c *gin.Context) func(*model.Calendar) error {
	return ifMatchVersion(c, "calendar", calendarETag)
}

func writeCalendar(c *gin.Context, status int, cal *model.Calendar) {
	c.Header("ETag", calendarETag(cal))
	c.JSON(status, toCalendarJSON(cal))
}

func (s *Server) createCalendar(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	cal, err := s.Events.CreateCalendar(c.Request.Context(), principal(c), members)
	if err != nil {
		return err
	}
	c.Header("Location", "/calendars/"+cal.ID)
	writeCalendar(c, http.StatusCreated, &cal)
	return nil
}

func (s *Server) listCalendars(c *gin.Context) error {
	q, err := parseListQuery(c, s.Now())
	if err != nil {
		return err
	}
	f := model.CalendarFilter{AnyTags: q.anyTags, AllTags: q.allTags, Limit: q.limit}
	if q.cursor != "" {
		at, id, err := decodeCursor(q.cursor)
		if err != nil {
			return err
		}
		f.After = &model.CalendarCursor{CreatedAt: at, ID: id}
	}
	cals, err := s.Events.ListCalendars(c.Request.Context(), principal(c), f)
	if err != nil {
		return err
	}
	out := make([]calendarJSON, 0, len(cals))
	for i := range cals {
		out = append(out, toCalendarJSON(&cals[i]))
	}
	if len(cals) == q.limit {
		last := cals[len(cals)-1]
		setNextLink(c, encodeCursor(last.CreatedAt, last.ID))
	}
	c.JSON(http.StatusOK, out)
	return nil
}

func (s *Server) getCalendar(c *gin.Context) error {
	cal, err := s.Events.GetCalendar(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		return err
	}
	writeCalendar(c, http.StatusOK, &cal)
	return nil
}

func (s *Server) updateCalendar(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	cal, err := s.Events.UpdateCalendar(c.Request.Context(), principal(c), c.Param("id"), members, calendarIfMatch(c))
	if err != nil {
		return err
	}
	writeCalendar(c, http.StatusOK, &cal)
	return nil
}

func (s *Server) deleteCalendar(c *gin.Context) error {
	if err := s.Events.DeleteCalendar(c.Request.Context(), principal(c), c.Param("id"), calendarIfMatch(c)); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}
