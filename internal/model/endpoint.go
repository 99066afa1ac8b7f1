package model

import "time"

// EndpointState is an endpoint's health as deliveries see it.
type EndpointState string

// Endpoint states.
const (
	// EndpointHealthy delivers normally.
	EndpointHealthy EndpointState = "healthy"
	// EndpointDegraded delivers, but recent attempts failed.
	EndpointDegraded EndpointState = "degraded"
	// EndpointOpen has its circuit open: deliveries wait (uncounted) until a
	// cool-down passes and one trial delivery succeeds.
	EndpointOpen EndpointState = "open"
	// EndpointDisabled delivers nothing: its due occurrences fail with
	// reason endpoint_disabled until it is enabled again.
	EndpointDisabled EndpointState = "disabled"
)

// Why an endpoint is disabled.
const (
	DisabledManual      = "manual"       // POST /endpoints/{id}/disable
	DisabledCircuitOpen = "circuit_open" // open longer than disable_after
)

// Auth types of an endpoint's outbound authentication.
const (
	AuthBasic                   = "basic"
	AuthOAuth2ClientCredentials = "oauth2_client_credentials"
	AuthMTLS                    = "mtls"
)

// Endpoint is a shared delivery target: the URL, signing secret, limits and
// authentication that every event naming it (action.params.endpoint_id)
// delivers with.
type Endpoint struct {
	ID          string
	Name        string
	Description string
	URL         string
	// Secret and PreviousSecret hold AES-GCM ciphertext; never plaintext.
	Secret                []byte
	PreviousSecret        []byte
	PreviousSecretExpires *time.Time
	// Headers are added to every request to the endpoint.
	Headers        map[string]string
	RateLimit      *RateLimit // nil: unlimited
	MaxConcurrency int        // 0: unlimited
	TimeoutMS      int64      // 0: the event's or the server's default
	// Auth is the non-secret half of the outbound authentication (nil: HMAC
	// signature only); AuthSecret is the sealed JSON of its secret half
	// (EndpointAuthSecrets).
	Auth       *EndpointAuth
	AuthSecret []byte
	// Circuit overrides the deployment's circuit breaker settings (nil:
	// the defaults).
	Circuit   *Circuit
	Tags      []string
	Version   int64
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt *time.Time
	// Health is read with the endpoint.
	Health EndpointHealth
}

// RateLimit bounds the deliveries to an endpoint across all instances:
// PerSecond sustained, Burst at once.
type RateLimit struct {
	PerSecond float64 `json:"per_second"`
	Burst     int     `json:"burst"`
}

// EndpointAuth is the non-secret half of an endpoint's outbound auth, shown
// by the API. Certificates are public; their private key is not.
type EndpointAuth struct {
	Type string `json:"type"` // AuthBasic, AuthOAuth2ClientCredentials or AuthMTLS
	// basic
	Username string `json:"username,omitempty"`
	// oauth2_client_credentials
	TokenURL string   `json:"token_url,omitempty"`
	ClientID string   `json:"client_id,omitempty"`
	Scopes   []string `json:"scopes,omitempty"`
	Audience string   `json:"audience,omitempty"`
	// mtls: the client certificate chain, and a CA to trust for the
	// receiver's certificate besides the system roots (PEM).
	Certificate   string `json:"certificate,omitempty"`
	CACertificate string `json:"ca_certificate,omitempty"`
}

// EndpointAuthSecrets is the secret half of an endpoint's auth, stored
// sealed and never shown by the API or logged.
type EndpointAuthSecrets struct {
	Password     string `json:"password,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	PrivateKey   string `json:"private_key,omitempty"`
}

// Circuit configures when an endpoint's circuit opens and what follows.
// Zero fields take the deployment's defaults.
type Circuit struct {
	// Failures is the run of consecutive failed attempts that opens it.
	Failures int
	// FailureRatio opens it when this share of the attempts in Window
	// failed, once at least MinRequests were made.
	FailureRatio float64
	MinRequests  int
	Window       time.Duration
	// CoolDown is how long it stays open before a trial delivery.
	CoolDown time.Duration
	// DisableAfter disables the endpoint once open this long.
	DisableAfter time.Duration
}

// EndpointHealth is an endpoint's shared health and circuit state.
type EndpointHealth struct {
	State          EndpointState
	StateChangedAt time.Time
	DisabledReason string // DisabledManual or DisabledCircuitOpen when disabled
	OpenedAt       *time.Time
	// CoolDownUntil is when an open circuit lets one trial delivery through;
	// TrialToken and TrialUntil mark the trial in flight.
	CoolDownUntil       *time.Time
	TrialToken          string
	TrialUntil          *time.Time
	ConsecutiveFailures int
	// The current failure-ratio window.
	WindowStart    *time.Time
	WindowTotal    int
	WindowFailures int
	LastError      string
	LastErrorAt    *time.Time
	LastSuccessAt  *time.Time
}

// EndpointStats summarizes an endpoint's recent attempts for the API.
type EndpointStats struct {
	Since        time.Time // the oldest attempt considered
	Attempts     int
	Succeeded    int
	SuccessRatio *float64 // nil without attempts
	// Latency percentiles of the attempts' durations, in milliseconds.
	LatencyP50MS *int64
	LatencyP90MS *int64
	LatencyP99MS *int64
}

// EndpointFilter selects endpoints for listing; tags work as on events.
type EndpointFilter struct {
	AnyTags []string
	AllTags []string
	State   EndpointState // "" for any
	// Scope restricts to endpoints sharing a tag with it unless
	// Unrestricted.
	Scope        []string
	Unrestricted bool
	// After is the keyset cursor: rows strictly older than (CreatedAt, ID).
	After *EndpointCursor
	Limit int
}

// EndpointCursor is a keyset position in the newest-first listing.
type EndpointCursor struct {
	CreatedAt time.Time
	ID        string
}

// The changes an endpoint's circuit history records (CircuitEntry.Change).
const (
	CircuitOpened   = "opened"   // failures opened a closed circuit
	CircuitReopened = "reopened" // the trial delivery failed: a new cool-down
	CircuitClosed   = "closed"   // the trial delivery succeeded
	CircuitDisabled = "disabled" // open longer than disable_after, or by a user
	CircuitEnabled  = "enabled"  // by a user
)

// CircuitHistoryKeep is how many circuit entries are kept per endpoint: the
// newest ones. A flapping endpoint adds two rows per cool-down at most, so
// this covers days of an outage while the table stays small without a
// retention job; older transitions are of little use to an operator.
const CircuitHistoryKeep = 200

// CircuitEntry is one transition of an endpoint's circuit.
type CircuitEntry struct {
	ID         string
	EndpointID string
	At         time.Time
	Change     string // CircuitOpened …
	From, To   EndpointState
	// Reason is why: the last error for the breaker's changes, the
	// disabled reason for a disable.
	Reason              string
	ConsecutiveFailures int
	// Subject and Channel name the user of a user's action (enable,
	// disable); empty for the breaker's own changes.
	Subject, Channel string
}

// PageCursor is a keyset position in a newest-first listing: rows strictly
// before (At, ID).
type PageCursor struct {
	At time.Time
	ID string
}
