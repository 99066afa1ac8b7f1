package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/recurrence"
)

const (
	defaultPreviewCount = 10
	maxPreviewCount     = 1000
)

var previewFields = input.Set("start_time", "timezone", "rrule", "schedule", "cron", "count", "after")

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
	now := s.Now()
	rule, err := s.Events.PreviewRule(in, now)
	if err != nil {
		return err
	}
	after := now
	if afterText != "" {
		if after, err = time.Parse(time.RFC3339Nano, afterText); err != nil {
			return input.BadRequest("after", "must be an RFC 3339 time")
		}
	}
	return s.writePreview(c, rule, after, count)
}

// previewEvent shows the next instants of an existing event.
func (s *Server) previewEvent(c *gin.Context) error {
	ev, err := s.visibleEvent(c)
	if err != nil {
		return err
	}
	count := defaultPreviewCount
	if v := c.Query("count"); v != "" {
		if count, err = strconv.Atoi(v); err != nil {
			return input.BadRequest("count", "must be an integer")
		}
	}
	after := s.Now()
	if v, err := timeParam(c.Request.URL.Query(), "after", "from"); err != nil {
		return err
	} else if v != nil {
		after = *v
	}
	rule, err := ev.Compile(s.opts.Recurrence)
	if err != nil {
		return err
	}
	return s.writePreview(c, rule, after, count)
}

func (s *Server) writePreview(c *gin.Context, rule *recurrence.Rule, after time.Time, count int) error {
	if count < 1 || count > maxPreviewCount {
		return input.BadRequestf("count", "must be between 1 and %d", maxPreviewCount)
	}
	instants, err := recurrence.Preview(rule, after, count)
	if errors.Is(err, recurrence.ErrIterationBudget) {
		return input.BadRequest("after", "the rule reaches no further instant within the computation budget from this "+
			"time; choose an earlier after, a smaller count or a simpler rule")
	}
	if err != nil {
		return err
	}
	out := make([]gin.H, 0, len(instants))
	for _, in := range instants {
		out = append(out, gin.H{"utc": in.UTC, "local": in.Local})
	}
	res := gin.H{"timezone": rule.Location().String(), "instants": out}
	if len(out) == 0 {
		res["reason"] = "no instant of this schedule follows " + after.UTC().Format(time.RFC3339Nano) +
			": the series has ended or its next instant lies beyond year 9999"
	}
	c.JSON(http.StatusOK, res)
	return nil
}
