package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

const (
	defaultPreviewCount = 10
	maxPreviewCount     = 1000
)

var previewFields = input.Set("start_time", "timezone", "rrule", "schedule", "cron", "count", "after", "dst",
	"jitter", "calendars")

// previewSchedule shows the next instants of a schedule without creating
// anything; validation errors are the ones POST /events would give.
func (s *Server) previewSchedule(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	if err := input.RejectUnknown(members, previewFields, nil); err != nil {
		return err
	}
	count := defaultPreviewCount
	if _, err := input.DecodeField(members, "count", &count); err != nil {
		return err
	}
	var afterText string
	if _, err := input.DecodeField(members, "after", &afterText); err != nil {
		return err
	}
	delete(members, "count")
	delete(members, "after")
	in, err := events.DecodeInput(members)
	if err != nil {
		return err
	}
	after := s.Now()
	if afterText != "" {
		// Read in the schedule's own zone; an unknown one is refused below.
		loc := time.UTC
		if in.Timezone != nil {
			if l, err := time.LoadLocation(*in.Timezone); err == nil {
				loc = l
			}
		}
		if after, err = recurrence.ParseInstant("after", afterText, loc, after); err != nil {
			return err
		}
	}
	if err := checkPreviewCount(count); err != nil {
		return err
	}
	p, err := s.Events.PreviewSchedule(c.Request.Context(), principal(c), in, after, count)
	return writePreview(c, p, after, err)
}

// previewEvent shows the next instants of an existing event.
func (s *Server) previewEvent(c *gin.Context) error {
	var err error
	count := defaultPreviewCount
	if v := c.Query("count"); v != "" {
		if count, err = strconv.Atoi(v); err != nil {
			return input.BadRequest("count", "must be an integer")
		}
	}
	after := s.Now()
	if v, err := timeParam(c.Request.URL.Query(), "after", "from", after); err != nil {
		return err
	} else if v != nil {
		after = *v
	}
	if err := checkPreviewCount(count); err != nil {
		return err
	}
	p, err := s.Events.PreviewEvent(c.Request.Context(), principal(c), c.Param("id"), after, count)
	return writePreview(c, p, after, err)
}

func checkPreviewCount(count int) error {
	if count < 1 || count > maxPreviewCount {
		return input.BadRequestf("count", "must be between 1 and %d", maxPreviewCount)
	}
	return nil
}

// writePreview answers with the planned rows: each instant in UTC and in
// the schedule's zone; skipped ones say why, moved or rolled ones where
// they were planned.
func writePreview(c *gin.Context, p events.Preview, after time.Time, err error) error {
	// A budget error names the field to blame: after (a COUNT series walked
	// too far to reach it) or the rule (too sparse for its FREQ); a 400.
	var fe *recurrence.FieldError
	if errors.Is(err, recurrence.ErrIterationBudget) && !errors.As(err, &fe) {
		return input.BadRequest("after", "the rule reaches no further instant within the computation budget from this "+
			"time; choose an earlier after, a smaller count or a simpler rule")
	}
	if err != nil {
		return err
	}
	out := make([]gin.H, 0, len(p.Rows))
	for _, r := range p.Rows {
		item := gin.H{"utc": r.At, "local": r.At.In(p.Location).Format(time.RFC3339Nano)}
		if r.Status == model.OccurrenceSkipped {
			item["skipped"], item["reason"] = true, r.Reason
		}
		if r.Original != nil {
			item["original"] = *r.Original
		}
		out = append(out, item)
	}
	res := gin.H{"timezone": p.Location.String(), "instants": out}
	if len(out) == 0 {
		res["reason"] = "no instant of this schedule follows " + after.UTC().Format(time.RFC3339Nano) +
			": the series has ended or its next instant lies beyond year 9999"
	}
	c.JSON(http.StatusOK, res)
	return nil
}
