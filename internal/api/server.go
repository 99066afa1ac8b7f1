// Package api is the HTTP face of Qhronos: routes, the auth middleware, error
// mapping and the WebSocket endpoint.
package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/hub"
	"github.com/qhronos/qhronos/internal/metrics"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
	"github.com/qhronos/qhronos/internal/redact"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/secrets"
	"github.com/qhronos/qhronos/internal/tracing"
)

// Store is what the API reads directly. Every change goes through the
// events service (Deps.Events); token records are the one exception — a
// single-statement write each.
type Store interface {
	Ping(ctx context.Context) error
	// StorageFull reports a write refused for lack of space, recently and
	// not followed by a successful one.
	StorageFull(now time.Time) bool
	ListEvents(ctx context.Context, f model.EventFilter) ([]model.Event, error)
	ListOccurrences(ctx context.Context, f model.OccurrenceFilter) ([]model.Occurrence, error)
	CountOccurrences(ctx context.Context, f model.OccurrenceFilter) (int, error)
	ListArchivedOccurrences(ctx context.Context, f model.OccurrenceFilter) ([]model.ArchivedOccurrence, error)
	CountArchivedOccurrences(ctx context.Context, f model.OccurrenceFilter) (int, error)
	ListAttempts(ctx context.Context, occurrenceID string) ([]model.Attempt, error)
	CountWaiting(ctx context.Context) (map[model.OccurrenceStatus]int, error)
	Stats(ctx context.Context, f model.StatsFilter) (model.Stats, error)
	Timeline(ctx context.Context, f model.TimelineFilter) ([]model.TimelineBucket, error)
	Punctuality(ctx context.Context, f model.PunctualityFilter) (model.PunctualityReport, error)
	CreateToken(ctx context.Context, t model.Token) error
	ListTokens(ctx context.Context, createdBy string, limit int) ([]model.Token, error)
	RevokeToken(ctx context.Context, id string, now time.Time) error
	PendingReplans(ctx context.Context) (int, error)
	CreatePortalLink(ctx context.Context, l model.PortalLink, now time.Time) error
	RedeemPortalLink(ctx context.Context, codeHash string, now time.Time,
		issue func(model.PortalLink) (model.Token, error)) (model.PortalLink, error)
}

// Lifecycle is the events service (internal/lifecycle): every change to an
// event or an occurrence, and the reads that check the principal's scope.
type Lifecycle interface {
	Get(ctx context.Context, p auth.Principal, id string, withDeleted bool) (model.Event, error)
	Occurrence(ctx context.Context, p auth.Principal, id string) (model.Occurrence, error)
	Create(ctx context.Context, p auth.Principal, via string, in *events.Input, o events.Once) (events.Answer, error)
	CreateMany(ctx context.Context, p auth.Principal, via string, b events.Batch, o events.Once) (events.Answer, error)
	Update(ctx context.Context, p auth.Principal, id string, in *events.Input, check events.Precondition) (model.Event, error)
	Pause(ctx context.Context, p auth.Principal, id string, req events.Pause, check events.Precondition) (model.Event, error)
	Resume(ctx context.Context, p auth.Principal, id string, req events.Resume, check events.Precondition) (model.Event, error)
	Delete(ctx context.Context, p auth.Principal, id string, check events.Precondition) error
	Upsert(ctx context.Context, p auth.Principal, via, key string, in *events.Input, d events.Debounce) (model.Event, bool, error)
	DeleteByKey(ctx context.Context, p auth.Principal, key string) error
	Trigger(ctx context.Context, p auth.Principal, id string, o events.Once) (events.Answer, error)
	Backfill(ctx context.Context, p auth.Principal, id string, b events.Backfill) (events.BackfillResult, error)
	RotateSecret(ctx context.Context, p auth.Principal, id string, grace time.Duration) (string, model.Event, error)
	Acknowledge(ctx context.Context, a events.Ack) error
	CompleteRun(ctx context.Context, p auth.Principal, byRunToken bool, id string, r events.RunReport) (model.Occurrence, error)
	ListConcurrencyKeys(ctx context.Context, p auth.Principal, after string, limit int) ([]repository.ConcurrencyKey, error)
	GetConcurrencyKey(ctx context.Context, p auth.Principal, key string) (repository.ConcurrencyKey, error)
	PauseConcurrencyKey(ctx context.Context, p auth.Principal, key string, paused bool) (repository.ConcurrencyKey, error)
	Heartbeat(ctx context.Context, p auth.Principal, byRunToken bool, id string) (model.Occurrence, error)
	Replay(ctx context.Context, p auth.Principal, id string) (model.Occurrence, error)
	// ReplayDelivery, Deliveries and SubscriptionDeliveries are an
	// occurrence's fan-out (#39).
	ReplayDelivery(ctx context.Context, p auth.Principal, id, subscriptionID string) (model.Occurrence, error)
	Deliveries(ctx context.Context, p auth.Principal, id, after string, limit int) ([]model.Delivery, error)
	SubscriptionDeliveries(ctx context.Context, p auth.Principal, id string, before *model.PageCursor, limit int) (
		[]model.Attempt, error)
	ReplayMany(ctx context.Context, p auth.Principal, f model.RetryFilter) (model.RetryResult, error)
	PreviewSchedule(ctx context.Context, p auth.Principal, in *events.Input, after time.Time, n int) (events.Preview, error)
	PreviewEvent(ctx context.Context, p auth.Principal, id string, after time.Time, n int) (events.Preview, error)
	// NextFiringAfterPause is when an event paused until a moment fires next.
	NextFiringAfterPause(ctx context.Context, ev *model.Event) (*time.Time, error)
	SkipOccurrence(ctx context.Context, p auth.Principal, id, reason string) (model.Occurrence, error)
	UnskipOccurrence(ctx context.Context, p auth.Principal, id string) (model.Occurrence, error)
	MoveOccurrence(ctx context.Context, p auth.Principal, id string, to events.When, reason string) (model.Occurrence, error)
	Exceptions(ctx context.Context, p auth.Principal, eventID string) ([]model.Exception, error)
	AddException(ctx context.Context, p auth.Principal, eventID string, ex events.ExceptionInput) (model.Exception, error)
	DeleteException(ctx context.Context, p auth.Principal, eventID string, at events.When) error
	History(ctx context.Context, p auth.Principal, id string, withDeleted bool, f model.HistoryFilter) ([]model.HistoryEntry, error)

	CreateTopic(ctx context.Context, p auth.Principal, body map[string]json.RawMessage) (model.Topic, error)
	GetTopic(ctx context.Context, name string) (model.Topic, error)
	ListTopics(ctx context.Context, after string, limit int) ([]model.Topic, error)
	UpdateTopic(ctx context.Context, name string, body map[string]json.RawMessage, check func(*model.Topic) error) (model.Topic, error)
	DeleteTopic(ctx context.Context, name string, check func(*model.Topic) error) error
	CreateSubscription(ctx context.Context, p auth.Principal, body map[string]json.RawMessage) (model.Subscription, error)
	GetSubscription(ctx context.Context, p auth.Principal, id string) (model.Subscription, error)
	ListSubscriptions(ctx context.Context, p auth.Principal, f model.SubscriptionFilter) ([]model.Subscription, error)
	UpdateSubscription(ctx context.Context, p auth.Principal, id string, body map[string]json.RawMessage,
		check func(*model.Subscription) error) (model.Subscription, error)
	DeleteSubscription(ctx context.Context, p auth.Principal, id string, check func(*model.Subscription) error) error
	CreateCalendar(ctx context.Context, p auth.Principal, body map[string]json.RawMessage) (model.Calendar, error)
	GetCalendar(ctx context.Context, p auth.Principal, id string) (model.Calendar, error)
	ListCalendars(ctx context.Context, p auth.Principal, f model.CalendarFilter) ([]model.Calendar, error)
	UpdateCalendar(ctx context.Context, p auth.Principal, id string, body map[string]json.RawMessage,
		check func(*model.Calendar) error) (model.Calendar, error)
	DeleteCalendar(ctx context.Context, p auth.Principal, id string, check func(*model.Calendar) error) error

	CreateEndpoint(ctx context.Context, p auth.Principal, body map[string]json.RawMessage) (model.Endpoint, string, error)
	GetEndpoint(ctx context.Context, p auth.Principal, id string) (model.Endpoint, error)
	ListEndpoints(ctx context.Context, p auth.Principal, f model.EndpointFilter) ([]model.Endpoint, error)
	EndpointStats(ctx context.Context, e *model.Endpoint) (model.EndpointStats, error)
	UpdateEndpoint(ctx context.Context, p auth.Principal, id string, body map[string]json.RawMessage,
		check func(*model.Endpoint) error) (model.Endpoint, error)
	DeleteEndpoint(ctx context.Context, p auth.Principal, id string, check func(*model.Endpoint) error) error
	EnableEndpoint(ctx context.Context, p auth.Principal, id string) (model.Endpoint, int, error)
	DisableEndpoint(ctx context.Context, p auth.Principal, id string) (model.Endpoint, error)
	RotateEndpointSecret(ctx context.Context, p auth.Principal, id string, grace time.Duration) (string, model.Endpoint, error)
	CircuitHistory(ctx context.Context, p auth.Principal, id string, before *model.PageCursor, limit int) (
		[]model.CircuitEntry, error)
}

// StatusReporter reports background loops for /status.
type StatusReporter interface {
	Status() map[string]any
}

// Options are the API's tunables, every one explicit: OptionsFrom takes
// them from the configuration, where their defaults live.
type Options struct {
	MaxBodyBytes int64
	// MaxBatchBodyBytes caps the body of POST /events/batch (each of its
	// events is still held to MaxBodyBytes); 0 means MaxBodyBytes.
	MaxBatchBodyBytes int64
	TrustedProxies    []netip.Prefix
	RateLimit         coordination.Limit
	LimitMaster       bool
	TokenMaxTTL       time.Duration
	Recurrence        recurrence.Limits
	WebSocket         WebSocketOptions
	// MetricsToken, when set, is required as a bearer token on /metrics.
	MetricsToken string
	// HTTP holds the listener's limits (server.*).
	HTTP HTTPOptions
	// PublicURL is where browsers reach this server (server.public_url, else
	// the listen address): portal links point under it.
	PublicURL string
}

// HTTPOptions are the timeouts and header limit that keep slow or idle
// clients (slowloris, unfinished bodies) from holding resources.
type HTTPOptions struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
}

// OptionsFrom takes the API's options from the loaded (validated)
// configuration.
func OptionsFrom(cfg *config.Config) Options {
	return Options{
		MaxBodyBytes: cfg.Server.MaxBodyBytes, MaxBatchBodyBytes: cfg.Server.MaxBatchBodyBytes,
		TrustedProxies: cfg.Server.TrustedProxies,
		RateLimit:      coordination.Limit{Rate: cfg.RateLimit.Rate, Burst: cfg.RateLimit.Burst},
		LimitMaster:    cfg.RateLimit.LimitMaster, TokenMaxTTL: cfg.Auth.TokenMaxTTL,
		Recurrence: recurrence.Limits{MinInterval: cfg.Scheduler.MinInterval, MaxCount: cfg.Scheduler.MaxCount},
		WebSocket: WebSocketOptions{AllowedOrigins: cfg.Server.AllowedOrigins,
			HandshakeTimeout: cfg.WebSocket.HandshakeTimeout},
		MetricsToken: cfg.Metrics.Token, PublicURL: cfg.APIBaseURL(),
		HTTP: HTTPOptions{ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout, ReadTimeout: cfg.Server.ReadTimeout,
			WriteTimeout: cfg.Server.WriteTimeout, IdleTimeout: cfg.Server.IdleTimeout,
			MaxHeaderBytes: cfg.Server.MaxHeaderBytes},
	}
}

// Info describes this instance for /status.
type Info struct {
	Database   string // sqlite | postgres
	Version    string
	InstanceID string
	StartedAt  time.Time
}

// Deps are the server's collaborators, built in main.
type Deps struct {
	Store   Store
	Events  Lifecycle
	Auth    *auth.Authenticator
	Actions *actions.Registry
	Coord   coordination.Coordinator
	Status  StatusReporter // may be nil
	Replans StatusReporter // the calendar re-planner; may be nil
	Secrets *secrets.Box
	Hub     *hub.Hub         // nil disables /ws
	Metrics *metrics.Metrics // nil disables /metrics
	Logger  *zap.Logger
	Now     func() time.Time
	Info    Info
	// Extra registers more routes (the WebSocket endpoint, metrics) on the
	// engine after the core ones.
	Extra func(r *gin.Engine)
	// Notifications manages /notification-channels; nil leaves the routes out.
	Notifications NotificationChannels
	// EndpointTests sends POST /endpoints/{id}/test (endpoints.Runtime);
	// nil answers that route 503.
	EndpointTests EndpointTester
}

// Server serves the REST API.
type Server struct {
	Deps
	opts   Options
	log    *zap.Logger
	engine *gin.Engine
	// redact shows sensitive values (internal/redact) in every answer.
	redact *redact.Redactor
}

// New builds the server and its routes.
func New(d Deps, opts Options) *Server {
	if d.Now == nil {
		d.Now = time.Now
	}
	gin.SetMode(gin.ReleaseMode)
	s := &Server{Deps: d, opts: opts, log: d.Logger.Named("api"), redact: d.Secrets.Redactor()}
	s.engine = s.routes()
	return s
}

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler { return s.engine }

// HTTPServer wraps the handler with the limits of Options.HTTP.
func (s *Server) HTTPServer(addr string) *http.Server {
	h := s.opts.HTTP
	return &http.Server{
		Addr:              addr,
		Handler:           s.engine,
		ReadHeaderTimeout: h.ReadHeaderTimeout,
		ReadTimeout:       h.ReadTimeout,
		WriteTimeout:      h.WriteTimeout,
		IdleTimeout:       h.IdleTimeout,
		MaxHeaderBytes:    h.MaxHeaderBytes,
	}
}

func (s *Server) routes() *gin.Engine {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	r.Use(tracing.Middleware(), s.requestID, s.recoverer, s.accessLog)
	if s.Metrics != nil {
		r.Use(s.Metrics.HTTPMiddleware())
		r.GET("/metrics", gin.WrapH(s.Metrics.Handler(s.opts.MetricsToken)))
	}
	r.NoRoute(func(c *gin.Context) { c.AbortWithStatusJSON(http.StatusNotFound, errorBody{Error: "no such route"}) })
	r.NoMethod(func(c *gin.Context) {
		c.AbortWithStatusJSON(http.StatusMethodNotAllowed, errorBody{Error: "method not allowed"})
	})

	r.GET("/health", s.health)
	r.GET("/healthz", s.health)
	r.GET("/ready", s.handle(s.ready))
	r.GET("/status", s.handle(s.status))
	r.GET("/openapi.json", s.openAPI)

	if s.Hub != nil {
		r.GET("/ws", s.websocketHandler(s.Hub, s.opts.WebSocket))
	}

	s.runRoutes(r)
	authed := r.Group("/", s.authenticate, s.rateLimit, s.limitBody, s.storableParams)
	read := authed.Group("/", s.require(model.AccessRead))
	write := authed.Group("/", s.require(model.AccessWrite))
	admin := authed.Group("/", s.require(model.AccessAdmin))
	// The portal's routes (portal.go): open to portal sessions within their
	// tags as well; every other route refuses them.
	portalRead := authed.Group("/", s.openToPortal, s.require(model.AccessRead))
	portalWrite := authed.Group("/", s.openToPortal, s.require(model.AccessWrite))

	write.POST("/events", s.handle(s.createEvent))
	write.POST("/events/batch", s.handle(s.createEvents))
	read.GET("/events", s.handle(s.listEvents))
	read.GET("/events/:id", s.handle(s.getEvent))
	write.PUT("/events/:id", s.handle(s.updateEvent))
	write.DELETE("/events/:id", s.handle(s.deleteEvent))
	write.PUT("/events/by-key/:key", s.handle(s.upsertEvent))
	write.DELETE("/events/by-key/:key", s.handle(s.deleteEventByKey))
	write.POST("/events/:id/pause", s.handle(s.pauseEvent))
	write.POST("/events/:id/resume", s.handle(s.resumeEvent))
	write.POST("/events/:id/trigger", s.handle(s.triggerEvent))
	write.POST("/events/:id/backfill", s.handle(s.backfillEvent))
	write.POST("/events/:id/rotate-secret", s.handle(s.rotateSecret))
	read.GET("/events/:id/occurrences", s.handle(s.eventOccurrences))
	read.GET("/events/:id/preview", s.handle(s.previewEvent))
	read.GET("/events/:id/history", s.handle(s.eventHistory))
	read.POST("/schedules/preview", s.handle(s.previewSchedule))

	write.POST("/calendars", s.handle(s.createCalendar))
	read.GET("/calendars", s.handle(s.listCalendars))
	read.GET("/calendars/:id", s.handle(s.getCalendar))
	write.PUT("/calendars/:id", s.handle(s.updateCalendar))
	write.DELETE("/calendars/:id", s.handle(s.deleteCalendar))

	portalWrite.POST("/endpoints", s.handle(s.createEndpoint))
	portalRead.GET("/endpoints", s.handle(s.listEndpoints))
	portalRead.GET("/endpoints/:id", s.handle(s.getEndpoint))
	portalWrite.PATCH("/endpoints/:id", s.handle(s.updateEndpoint))
	portalWrite.DELETE("/endpoints/:id", s.handle(s.deleteEndpoint))
	portalWrite.POST("/endpoints/:id/enable", s.handle(s.enableEndpoint))
	portalWrite.POST("/endpoints/:id/disable", s.handle(s.disableEndpoint))
	portalWrite.POST("/endpoints/:id/rotate-secret", s.handle(s.rotateEndpointSecret))
	portalWrite.POST("/endpoints/:id/test", s.handle(s.testEndpoint))
	portalRead.GET("/endpoints/:id/circuit-history", s.handle(s.endpointCircuitHistory))

	admin.POST("/topics", s.handle(s.createTopic))
	portalRead.GET("/topics", s.handle(s.listTopics))
	portalRead.GET("/topics/:name", s.handle(s.getTopic))
	admin.PATCH("/topics/:name", s.handle(s.updateTopic))
	admin.DELETE("/topics/:name", s.handle(s.deleteTopic))
	portalWrite.POST("/subscriptions", s.handle(s.createSubscription))
	portalRead.GET("/subscriptions", s.handle(s.listSubscriptions))
	portalRead.GET("/subscriptions/:id", s.handle(s.getSubscription))
	portalRead.GET("/subscriptions/:id/deliveries", s.handle(s.subscriptionDeliveries))
	portalWrite.PATCH("/subscriptions/:id", s.handle(s.updateSubscription))
	portalWrite.DELETE("/subscriptions/:id", s.handle(s.deleteSubscription))

	// A portal link is made by a token that may create what carries its
	// tags; redeeming it takes no bearer (the code is the credential).
	write.POST("/portal-links", s.handle(s.createPortalLink))
	r.POST("/portal-links/redeem", s.limitBody, s.storableParams, s.handle(s.redeemPortalLink))

	read.GET("/concurrency-keys", s.handle(s.listConcurrencyKeys))
	read.GET("/concurrency-keys/:key", s.handle(s.getConcurrencyKey))
	write.POST("/concurrency-keys/:key/pause", s.handle(s.pauseConcurrencyKey))
	write.POST("/concurrency-keys/:key/resume", s.handle(s.resumeConcurrencyKey))

	portalRead.GET("/occurrences", s.handle(s.listOccurrences))
	portalRead.GET("/occurrences/:id", s.handle(s.getOccurrence))
	portalRead.GET("/occurrences/:id/attempts", s.handle(s.occurrenceAttempts))
	portalRead.GET("/occurrences/:id/deliveries", s.handle(s.occurrenceDeliveries))

	admin.POST("/tokens", s.handle(s.createToken))
	admin.GET("/tokens", s.handle(s.listTokens))
	admin.DELETE("/tokens/:id", s.handle(s.revokeToken))
	if s.Notifications != nil {
		s.notificationChannelRoutes(admin)
	}

	read.GET("/stats", s.handle(s.stats))
	read.GET("/stats/timeline", s.handle(s.timeline))
	read.GET("/stats/punctuality", s.handle(s.punctuality))
	portalWrite.POST("/occurrences/retry", s.handle(s.retryOccurrences))
	portalWrite.POST("/occurrences/:id/retry", s.handle(s.retryOccurrence))
	write.POST("/occurrences/:id/skip", s.handle(s.skipOccurrence))
	write.POST("/occurrences/:id/unskip", s.handle(s.unskipOccurrence))
	write.POST("/occurrences/:id/move", s.handle(s.moveOccurrence))
	read.GET("/events/:id/exceptions", s.handle(s.listExceptions))
	write.POST("/events/:id/exceptions", s.handle(s.addException))
	write.DELETE("/events/:id/exceptions/:at", s.handle(s.deleteException))

	if s.Extra != nil {
		s.Extra(r)
	}
	return r
}
