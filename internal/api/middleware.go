package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

const (
	ctxRequestID = "qhronos.request_id"
	ctxPrincipal = "qhronos.principal"
)

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// requestID takes a sane X-Request-ID from the client or makes one, and
// echoes it so logs and answers can be matched.
func (s *Server) requestID(c *gin.Context) {
	id := c.GetHeader("X-Request-ID")
	if !validRequestID.MatchString(id) {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		id = hex.EncodeToString(b)
	}
	c.Set(ctxRequestID, id)
	c.Header("X-Request-ID", id)
	c.Next()
}

func requestID(c *gin.Context) string { return c.GetString(ctxRequestID) }

// recoverer turns a panic into a 500 JSON answer; details go to the log.
func (s *Server) recoverer(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic in handler", zap.String("request_id", requestID(c)), zap.Any("panic", v),
				zap.String("route", c.FullPath()), zap.Stack("stack"))
			c.AbortWithStatusJSON(http.StatusInternalServerError, errorBody{Error: "internal error"})
		}
	}()
	c.Next()
}

// accessLog records one line per request: never headers, tokens or bodies.
func (s *Server) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	s.log.Debug("request", zap.String("request_id", requestID(c)), zap.String("method", c.Request.Method),
		zap.String("route", route), zap.Int("status", c.Writer.Status()),
		zap.Duration("duration", time.Since(start)))
}

// storableParams refuses path and query parameters that are not valid UTF-8
// or hold NUL: compared against a PostgreSQL column they would fail there
// (a 500) instead of here (a 400 naming the parameter).
func (s *Server) storableParams(c *gin.Context) {
	for i, p := range c.Params {
		if !storableText(p.Value) {
			s.writeError(c, input.BadRequest(p.Key, paramRule))
			return
		}
		// Every resource id is a uuid; an upper-case one names the same
		// resource on both stores (PostgreSQL's uuid type would find it,
		// SQLite's text would not). Anything else stays as sent: a 404.
		if id, ok := input.CanonicalUUID(p.Value); ok && p.Key == "id" {
			c.Params[i].Value = id
		}
	}
	query := c.Request.URL.Query()
	keys := make([]string, 0, len(query))
	for k := range query {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !storableText(k) {
			s.writeError(c, input.BadRequest("query", "parameter names "+paramRule))
			return
		}
		for _, v := range query[k] {
			if !storableText(v) {
				s.writeError(c, input.BadRequest(k, paramRule))
				return
			}
		}
	}
	c.Next()
}

const paramRule = "must be valid UTF-8 without NUL"

func storableText(v string) bool { return utf8.ValidString(v) && !strings.ContainsRune(v, 0) }

// limitBody caps request bodies; reading past the cap yields 413. A batch
// create has its own cap (its events are held to the single one).
func (s *Server) limitBody(c *gin.Context) {
	limit := s.opts.MaxBodyBytes
	if c.FullPath() == batchRoute && s.opts.MaxBatchBodyBytes > 0 {
		limit = s.opts.MaxBatchBodyBytes
	}
	if c.Request.ContentLength > limit {
		c.AbortWithStatusJSON(http.StatusRequestEntityTooLarge,
			errorBody{Error: fmt.Sprintf("request body exceeds %d bytes", limit)})
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	c.Next()
}

// authenticate derives the request's principal once; every handler reads it
// from the context and every query is filtered by it.
func (s *Server) authenticate(c *gin.Context) {
	if s.authenticated(c) {
		c.Next()
	}
}

// authenticated is authenticate without going on: it sets the principal,
// or answers the failure and reports false.
func (s *Server) authenticated(c *gin.Context) bool {
	bearer := bearerToken(c)
	if bearer == "" {
		s.denyAuth(c, fmt.Errorf("%w: missing bearer token", auth.ErrUnauthenticated))
		return false
	}
	p, err := s.Auth.Authenticate(c.Request.Context(), bearer)
	if err != nil {
		s.denyAuth(c, err)
		return false
	}
	p.Channel = createdVia(c) // the client kind, for the events' history
	c.Set(ctxPrincipal, p)
	return true
}

// bearerToken is the request's bearer token, "" when it sends none.
func bearerToken(c *gin.Context) string {
	header := c.GetHeader("Authorization")
	bearer, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		bearer, ok = strings.CutPrefix(header, "bearer ")
	}
	if !ok {
		return ""
	}
	return strings.TrimSpace(bearer)
}

// denyAuth answers a failed authentication; failures count against the
// client address so guessing tokens is rate limited too.
func (s *Server) denyAuth(c *gin.Context, err error) {
	if errors.Is(err, auth.ErrUnauthenticated) {
		if s.limited(c, "ip:"+s.clientIP(c).String()) {
			return
		}
	}
	s.writeError(c, err)
}

func principal(c *gin.Context) auth.Principal {
	p, _ := c.Get(ctxPrincipal)
	pr, _ := p.(auth.Principal)
	return pr
}

// require answers 403 unless the principal has at least access a.
func (s *Server) require(a model.Access) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !principal(c).Allows(a) {
			s.writeError(c, errForbidden)
			return
		}
		c.Next()
	}
}

// rateLimit applies the per-principal GCRA limit.
func (s *Server) rateLimit(c *gin.Context) {
	if !s.principalLimited(c) {
		c.Next()
	}
}

// principalLimited is rateLimit without going on: it reports whether the
// request was stopped (and answered).
func (s *Server) principalLimited(c *gin.Context) bool {
	p := principal(c)
	if p.Master && !s.opts.LimitMaster {
		return false
	}
	return s.limited(c, p.Key())
}

// limited checks key against the limit, sets the RateLimit headers and
// answers 429 when denied. It reports whether the request was stopped.
func (s *Server) limited(c *gin.Context, key string) bool {
	res, ok := s.allow(c.Request.Context(), key)
	if !ok {
		return false
	}
	c.Header("RateLimit-Limit", strconv.Itoa(res.Limit))
	c.Header("RateLimit-Remaining", strconv.Itoa(res.Remaining))
	c.Header("RateLimit-Reset", strconv.Itoa(ceilSeconds(res.ResetAfter)))
	c.Header("X-RateLimit-Limit", strconv.Itoa(res.Limit))
	c.Header("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
	if res.Allowed {
		return false
	}
	c.Header("Retry-After", strconv.Itoa(max(1, ceilSeconds(res.RetryAfter))))
	s.writeError(c, &input.Error{Status: http.StatusTooManyRequests, Message: "rate limit exceeded"})
	return true
}

// allow charges one request to key's bucket and counts a denial. ok is
// false when the limiter cannot answer: it protects the service, so the
// request then goes through rather than fails.
func (s *Server) allow(ctx context.Context, key string) (res coordination.LimitResult, ok bool) {
	res, err := s.Coord.Allow(ctx, key, s.opts.RateLimit)
	if err != nil {
		s.log.Warn("rate limiter unavailable", zap.Error(err))
		return res, false
	}
	if !res.Allowed && s.Metrics != nil {
		s.Metrics.RateLimited()
	}
	return res, true
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// clientIP is the peer address, or the first untrusted hop of
// X-Forwarded-For when the peer is a configured trusted proxy: a client
// cannot choose its own address by sending the header.
func (s *Server) clientIP(c *gin.Context) netip.Addr {
	host, _, err := net.SplitHostPort(c.Request.RemoteAddr)
	if err != nil {
		host = c.Request.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	peer = peer.Unmap()
	if !s.trusted(peer) {
		return peer
	}
	hops := strings.Split(c.GetHeader("X-Forwarded-For"), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer
		}
		a = a.Unmap()
		if !s.trusted(a) {
			return a
		}
		peer = a
	}
	return peer
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.opts.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// isUnavailable reports errors that mean "the database is not answering",
// which the API turns into 503 rather than 500 (the store maps its driver's
// connection failures to model.ErrUnavailable).
func isUnavailable(err error) bool {
	var netErr net.Error
	return errors.Is(err, model.ErrUnavailable) || errors.As(err, &netErr)
}
