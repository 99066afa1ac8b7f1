package api

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/model"
)

// health answers while the process is alive.
func (s *Server) health(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// ready answers 503 only when the database is down; Redis trouble shows as
// "degraded" because dispatch continues from the database without it.
func (s *Server) ready(c *gin.Context) error {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	body := gin.H{"status": "ok", "database": "ok"}
	status := http.StatusOK
	if err := s.Store.Ping(ctx); err != nil {
		body["status"], body["database"] = "unavailable", "unreachable"
		status = http.StatusServiceUnavailable
	} else if s.Store.StorageFull(s.Now()) {
		// Reads answer, writes cannot: not ready to take work.
		body["status"], body["database"] = "unavailable", "storage full"
		status = http.StatusServiceUnavailable
	}
	if s.Coord != nil && s.Coord.Name() != "in-process" {
		body["redis"] = "ok"
		if err := s.Coord.Ping(ctx); err != nil {
			body["redis"] = "unreachable"
			if status == http.StatusOK {
				body["status"] = "degraded"
			}
		}
	}
	c.JSON(status, body)
	return nil
}

// status reports the instance's real state: no secrets, no tenant data.
// Its top-level status is ok, degraded (Redis or a background loop
// unhealthy) or unavailable (database down).
func (s *Server) status(c *gin.Context) error {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	now := s.Now()
	body := gin.H{
		"version":     s.Info.Version,
		"instance_id": s.Info.InstanceID,
		"started_at":  s.Info.StartedAt.UTC().Format(time.RFC3339),
		"uptime":      now.Sub(s.Info.StartedAt).Round(time.Second).String(),
		"time":        now.UTC().Format(time.RFC3339Nano),
	}
	backends := gin.H{"database": s.Info.Database, "coordination": s.Coord.Name()}
	switch err := s.Store.Ping(ctx); {
	case err != nil:
		backends["database_status"] = "unreachable"
	case s.Store.StorageFull(now):
		backends["database_status"] = "storage full"
	default:
		backends["database_status"] = "ok"
	}
	if err := s.Coord.Ping(ctx); err != nil {
		backends["coordination_status"] = "degraded"
	} else {
		backends["coordination_status"] = "ok"
	}
	body["backends"] = backends
	// queue is the waiting work only; finished history is in /stats.
	if counts, err := s.Store.CountWaiting(ctx); err == nil {
		queue := gin.H{}
		for st, n := range counts {
			queue[string(st)] = n
		}
		body["queue"] = queue
	}
	operator, stopped := s.operator(c)
	if stopped {
		return nil
	}
	overall := "ok"
	if s.Deps.Status != nil {
		loops := s.Deps.Status.Status()
		if !operator {
			hideDestinations(loops)
		}
		body["scheduler"] = loops
		if !loopsHealthy(loops) {
			overall = "degraded"
		}
	}
	replans := s.replans(ctx)
	body["replans"] = replans
	if replans["healthy"] == false {
		overall = "degraded"
	}
	if backends["coordination_status"] != "ok" {
		overall = "degraded"
	}
	if backends["database_status"] != "ok" {
		overall = "unavailable"
	}
	body["status"] = overall
	c.JSON(http.StatusOK, body)
	return nil
}

// loopsHealthy reads the "healthy" flag of every background loop's report;
// a loop that does not report one counts as healthy.
func loopsHealthy(loops map[string]any) bool {
	for _, v := range loops {
		if m, ok := v.(map[string]any); ok && m["healthy"] == false {
			return false
		}
	}
	return true
}

// replans reports the calendar re-plans: calendars whose events still wait
// (from the database) and the re-planner's last run.
func (s *Server) replans(ctx context.Context) gin.H {
	out := gin.H{}
	if s.Deps.Replans != nil {
		maps.Copy(out, s.Deps.Replans.Status())
	}
	if n, err := s.Store.PendingReplans(ctx); err == nil {
		out["pending_calendars"] = n
	}
	return out
}

// operator reports whether /status was asked by the master token or an
// admin token: they see every tenant, so the dispatcher's report may name
// destinations. /status stays public; a missing or bad token reads the
// tenant-free report, and a bad one counts against the client address as
// any failed authentication does (stopped: answered 429), so /status is no
// way around the limit on guessing tokens.
func (s *Server) operator(c *gin.Context) (ok, stopped bool) {
	bearer, found := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
	if !found || s.Auth == nil {
		return false, false
	}
	p, err := s.Auth.Authenticate(c.Request.Context(), strings.TrimSpace(bearer))
	if errors.Is(err, auth.ErrUnauthenticated) {
		return false, s.limited(c, "ip:"+s.clientIP(c).String())
	}
	return err == nil && p.Allows(model.AccessAdmin), false
}

// hideDestinations drops the destinations the dispatcher's workers hold
// (tenant data: whom a tenant delivers to) from a loops report; the counts
// stay.
func hideDestinations(loops map[string]any) {
	if d, ok := loops["dispatcher"].(map[string]any); ok {
		delete(d, "destinations")
	}
}
