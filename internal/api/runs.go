package api

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

// ctxRunToken marks a request made with the run token of the occurrence
// it names.
const ctxRunToken = "qhronos.run_token"

// runRoutes are where a receiver completes the run a callback event's
// delivery started, or says it is alive. They take the occurrence's run
// token as a bearer (valid for that occurrence only), or any token that
// may write the event.
func (s *Server) runRoutes(r *gin.Engine) {
	runs := r.Group("/", s.runAuth, s.limitBody, s.storableParams)
	runs.POST("/occurrences/:id/complete", s.handle(s.completeRun))
	runs.POST("/occurrences/:id/heartbeat", s.handle(s.heartbeatRun))
}

// runAuth admits the occurrence's own run token (rate limited per
// occurrence), and otherwise authenticates as every route does, with write
// access required. A run token of another occurrence is refused as
// unauthenticated.
func (s *Server) runAuth(c *gin.Context) {
	bearer := bearerToken(c)
	if !strings.HasPrefix(bearer, auth.RunTokenPrefix) {
		// authenticated and principalLimited, not authenticate and
		// rateLimit: those end in c.Next(), which ran the handler before
		// the checks after them here (a token without write access, such
		// as a portal session's, reached the service before it was refused).
		if !s.authenticated(c) || s.principalLimited(c) {
			return
		}
		if !principal(c).Allows(model.AccessWrite) {
			s.writeError(c, errForbidden)
			return
		}
		c.Next()
		return
	}
	if !s.Auth.ValidRunToken(c.Param("id"), bearer) {
		s.denyAuth(c, fmt.Errorf("%w: the run token is not this occurrence's", auth.ErrUnauthenticated))
		return
	}
	if s.limited(c, "run:"+c.Param("id")) {
		return
	}
	c.Set(ctxRunToken, true)
	c.Next()
}

// completeRun records the run's end ({status, output}) and answers the
// occurrence.
func (s *Server) completeRun(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	report, err := events.DecodeRunReport(members)
	if err != nil {
		return err
	}
	occ, err := s.Events.CompleteRun(c.Request.Context(), principal(c), c.GetBool(ctxRunToken), c.Param("id"), report)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, toOccurrenceJSON(&occ))
	return nil
}

// heartbeatRun moves the run's deadline and answers the occurrence. Its
// body, if any, is an empty object.
func (s *Server) heartbeatRun(c *gin.Context) error {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) > 0 {
		members, err := decodeObject(body)
		if err != nil {
			return err
		}
		if err := input.RejectUnknown(members, input.Set(), nil); err != nil {
			return err
		}
	}
	occ, err := s.Events.Heartbeat(c.Request.Context(), principal(c), c.GetBool(ctxRunToken), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, toOccurrenceJSON(&occ))
	return nil
}
