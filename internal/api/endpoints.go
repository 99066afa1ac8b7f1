package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/redact"
)

// endpointJSON is the endpoint resource. Write-only secrets (the signing
// secret, auth passwords, client secrets and private keys) are never part
// of it; Secret is set only in the answers that issue one.
type endpointJSON struct {
	ID                      string              `json:"id"`
	Name                    string              `json:"name"`
	Description             string              `json:"description"`
	URL                     string              `json:"url"`
	Headers                 map[string]string   `json:"headers"`
	RateLimit               *model.RateLimit    `json:"rate_limit"`
	MaxConcurrency          int                 `json:"max_concurrency"`
	Timeout                 *string             `json:"timeout"`
	Auth                    *model.EndpointAuth `json:"auth"`
	Circuit                 *circuitJSON        `json:"circuit"`
	Tags                    []string            `json:"tags"`
	State                   string              `json:"state"`
	DisabledReason          string              `json:"disabled_reason"`
	StateChangedAt          time.Time           `json:"state_changed_at"`
	OpenedAt                *time.Time          `json:"opened_at"`
	CoolDownUntil           *time.Time          `json:"cool_down_until"`
	Health                  endpointHealthJSON  `json:"health"`
	PreviousSecretExpiresAt *time.Time          `json:"previous_secret_expires_at"`
	Version                 int64               `json:"version"`
	CreatedBy               string              `json:"created_by"`
	CreatedAt               time.Time           `json:"created_at"`
	UpdatedAt               time.Time           `json:"updated_at"`
	Secret                  string              `json:"secret,omitempty"`
	Resumed                 *int                `json:"resumed,omitempty"`
}

// circuitJSON is an endpoint's circuit override; zero members take the
// deployment's defaults and are left out.
type circuitJSON struct {
	Failures     int     `json:"failures,omitempty"`
	FailureRatio float64 `json:"failure_ratio,omitempty"`
	MinRequests  int     `json:"min_requests,omitempty"`
	Window       string  `json:"window,omitempty"`
	CoolDown     string  `json:"cool_down,omitempty"`
	DisableAfter string  `json:"disable_after,omitempty"`
}

// endpointHealthJSON is an endpoint's recent record.
type endpointHealthJSON struct {
	Attempts            int                 `json:"attempts"`
	Succeeded           int                 `json:"succeeded"`
	SuccessRatio        *float64            `json:"success_ratio"`
	Since               time.Time           `json:"since"`
	LatencyMS           endpointLatencyJSON `json:"latency_ms"`
	ConsecutiveFailures int                 `json:"consecutive_failures"`
	LastError           *string             `json:"last_error"`
	LastErrorAt         *time.Time          `json:"last_error_at"`
	LastSuccessAt       *time.Time          `json:"last_success_at"`
}

type endpointLatencyJSON struct {
	P50 *int64 `json:"p50"`
	P90 *int64 `json:"p90"`
	P99 *int64 `json:"p99"`
}

func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// toEndpointJSON is the endpoint as answers show it: header values, the
// URL's userinfo and query values as r shows them (fingerprints).
func toEndpointJSON(r *redact.Redactor, e *model.Endpoint, st model.EndpointStats, now time.Time) endpointJSON {
	h := e.Health
	out := endpointJSON{ID: e.ID, Name: e.Name, Description: e.Description, URL: r.URL(e.URL), Headers: r.Headers(e.Headers),
		RateLimit: e.RateLimit, MaxConcurrency: e.MaxConcurrency, Auth: e.Auth, Tags: e.Tags, State: string(h.State),
		DisabledReason: h.DisabledReason, StateChangedAt: h.StateChangedAt, OpenedAt: h.OpenedAt,
		CoolDownUntil: h.CoolDownUntil, Version: e.Version, CreatedBy: e.CreatedBy, CreatedAt: e.CreatedAt,
		UpdatedAt: e.UpdatedAt,
		Health: endpointHealthJSON{Attempts: st.Attempts, Succeeded: st.Succeeded, SuccessRatio: st.SuccessRatio,
			Since: st.Since, LatencyMS: endpointLatencyJSON{P50: st.LatencyP50MS, P90: st.LatencyP90MS, P99: st.LatencyP99MS},
			ConsecutiveFailures: h.ConsecutiveFailures, LastErrorAt: h.LastErrorAt, LastSuccessAt: h.LastSuccessAt}}
	if out.Headers == nil {
		out.Headers = map[string]string{}
	}
	if e.Auth != nil {
		auth := *e.Auth
		auth.TokenURL = r.URL(auth.TokenURL)
		out.Auth = &auth
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if e.TimeoutMS > 0 {
		d := (time.Duration(e.TimeoutMS) * time.Millisecond).String()
		out.Timeout = &d
	}
	if c := e.Circuit; c != nil {
		out.Circuit = &circuitJSON{Failures: c.Failures, FailureRatio: c.FailureRatio, MinRequests: c.MinRequests,
			Window: durationText(c.Window), CoolDown: durationText(c.CoolDown), DisableAfter: durationText(c.DisableAfter)}
	}
	if h.LastError != "" {
		msg := h.LastError
		out.Health.LastError = &msg
	}
	if e.PreviousSecretExpires != nil && now.Before(*e.PreviousSecretExpires) {
		out.PreviousSecretExpiresAt = e.PreviousSecretExpires
	}
	return out
}

// endpointETag is the endpoint's strong validator: its id and version.
func endpointETag(e *model.Endpoint) string { return versionETag(e.ID, e.Version) }

// endpointIfMatch is the request's If-Match for an endpoint.
func endpointIfMatch(c *gin.Context) func(*model.Endpoint) error {
	return ifMatchVersion(c, "endpoint", endpointETag)
}

// endpointAnswer is the endpoint with its recent record.
func (s *Server) endpointAnswer(c *gin.Context, e *model.Endpoint) (endpointJSON, error) {
	st, err := s.Events.EndpointStats(c.Request.Context(), e)
	if err != nil {
		return endpointJSON{}, err
	}
	return toEndpointJSON(s.redact, e, st, s.Now()), nil
}

func (s *Server) writeEndpoint(c *gin.Context, status int, e *model.Endpoint, edit func(*endpointJSON)) error {
	out, err := s.endpointAnswer(c, e)
	if err != nil {
		return err
	}
	if edit != nil {
		edit(&out)
	}
	c.Header("ETag", endpointETag(e))
	c.JSON(status, out)
	return nil
}

func (s *Server) createEndpoint(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	e, secret, err := s.Events.CreateEndpoint(c.Request.Context(), principal(c), members)
	if err != nil {
		return err
	}
	c.Header("Location", "/endpoints/"+e.ID)
	return s.writeEndpoint(c, http.StatusCreated, &e, func(out *endpointJSON) { out.Secret = secret })
}

func (s *Server) listEndpoints(c *gin.Context) error {
	q, err := parseListQuery(c, s.Now())
	if err != nil {
		return err
	}
	f := model.EndpointFilter{AnyTags: q.anyTags, AllTags: q.allTags, Limit: q.limit}
	if st := c.Query("state"); st != "" {
		switch model.EndpointState(st) {
		case model.EndpointHealthy, model.EndpointDegraded, model.EndpointOpen, model.EndpointDisabled:
			f.State = model.EndpointState(st)
		default:
			return input.BadRequest("state", `must be "healthy", "degraded", "open" or "disabled"`)
		}
	}
	if q.cursor != "" {
		at, id, err := decodeCursor(q.cursor)
		if err != nil {
			return err
		}
		f.After = &model.EndpointCursor{CreatedAt: at, ID: id}
	}
	list, err := s.Events.ListEndpoints(c.Request.Context(), principal(c), f)
	if err != nil {
		return err
	}
	out := make([]endpointJSON, 0, len(list))
	for i := range list {
		e, err := s.endpointAnswer(c, &list[i])
		if err != nil {
			return err
		}
		out = append(out, e)
	}
	if len(list) == q.limit {
		last := list[len(list)-1]
		setNextLink(c, encodeCursor(last.CreatedAt, last.ID))
	}
	c.JSON(http.StatusOK, out)
	return nil
}

func (s *Server) getEndpoint(c *gin.Context) error {
	e, err := s.Events.GetEndpoint(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		return err
	}
	return s.writeEndpoint(c, http.StatusOK, &e, nil)
}

func (s *Server) updateEndpoint(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	e, err := s.Events.UpdateEndpoint(c.Request.Context(), principal(c), c.Param("id"), members, endpointIfMatch(c))
	if err != nil {
		return err
	}
	return s.writeEndpoint(c, http.StatusOK, &e, nil)
}

func (s *Server) deleteEndpoint(c *gin.Context) error {
	if err := s.Events.DeleteEndpoint(c.Request.Context(), principal(c), c.Param("id"), endpointIfMatch(c)); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

// enableEndpoint answers the endpoint and how many occurrences that failed
// while it was disabled were resumed.
func (s *Server) enableEndpoint(c *gin.Context) error {
	e, resumed, err := s.Events.EnableEndpoint(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		return err
	}
	return s.writeEndpoint(c, http.StatusOK, &e, func(out *endpointJSON) { out.Resumed = &resumed })
}

func (s *Server) disableEndpoint(c *gin.Context) error {
	e, err := s.Events.DisableEndpoint(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		return err
	}
	return s.writeEndpoint(c, http.StatusOK, &e, nil)
}

// rotateEndpointSecret issues a new signing secret, returned once; the
// previous one keeps signing beside it until the grace period ends.
func (s *Server) rotateEndpointSecret(c *gin.Context) error {
	grace, err := readGrace(c)
	if err != nil {
		return err
	}
	secret, e, err := s.Events.RotateEndpointSecret(c.Request.Context(), principal(c), c.Param("id"), grace)
	if err != nil {
		return err
	}
	return s.writeEndpoint(c, http.StatusOK, &e, func(out *endpointJSON) { out.Secret = secret })
}
