package lifecycle

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/redact"
)

// The product's limits on an endpoint.
const (
	MaxEndpointName        = 200
	MaxEndpointDescription = 2000
	MaxRatePerSecond       = 100000
	MaxEndpointConcurrency = 10000
	maxAuthText            = 1024     // usernames, passwords, client ids and secrets, audiences
	maxPEM                 = 64 << 10 // certificates and keys
	maxScopes              = 50
)

// Endpoint members a client may send, and read-only ones it may send back
// (ignored, so GET → edit → PATCH round trips work).
var (
	endpointFields   = input.Set("name", "description", "url", "secret", "headers", "rate_limit", "max_concurrency", "timeout", "auth", "circuit", "tags")
	endpointReadOnly = input.Set("id", "state", "disabled_reason", "state_changed_at", "opened_at", "cool_down_until",
		"health", "previous_secret_expires_at", "version", "created_by", "created_at", "updated_at")
)

// endpointChange is a decoded endpoint body applied to an endpoint: what it
// sets, and the plaintext secrets the service must seal.
type endpointChange struct {
	// Secret is the signing secret sent on create ("" when absent).
	Secret string
	// AuthSecrets is the auth's secret half after the change (nil: no
	// auth); AuthChanged says whether it must be sealed again.
	AuthSecrets *model.EndpointAuthSecrets
	AuthChanged bool
}

// authInput is the auth member as sent: its non-secret and secret fields.
type authInput struct {
	Type          string   `json:"type"`
	Username      *string  `json:"username"`
	Password      *string  `json:"password"`
	TokenURL      *string  `json:"token_url"`
	ClientID      *string  `json:"client_id"`
	ClientSecret  *string  `json:"client_secret"`
	Scopes        []string `json:"scopes"`
	Audience      *string  `json:"audience"`
	Certificate   *string  `json:"certificate"`
	PrivateKey    *string  `json:"private_key"`
	CACertificate *string  `json:"ca_certificate"`
}

type rateLimitInput struct {
	PerSecond *float64 `json:"per_second"`
	Burst     *int     `json:"burst"`
}

type circuitInput struct {
	Failures     *int     `json:"failures"`
	FailureRatio *float64 `json:"failure_ratio"`
	MinRequests  *int     `json:"min_requests"`
	Window       *string  `json:"window"`
	CoolDown     *string  `json:"cool_down"`
	DisableAfter *string  `json:"disable_after"`
}

// applyEndpoint applies a create (creating) or PATCH body to e: absent
// members keep their value, null clears an optional one. stored is the
// auth's current secret half (nil without auth); on PATCH an omitted
// secret field keeps its stored value while the auth type is unchanged.
func (s *Service) applyEndpoint(body map[string]json.RawMessage, e *model.Endpoint, creating bool,
	stored *model.EndpointAuthSecrets) (endpointChange, error) {
	var ch endpointChange
	if _, ok := body[""]; ok {
		return ch, input.BadRequest("body", "has a member without a name")
	}
	if err := input.RejectUnknown(body, endpointFields, endpointReadOnly); err != nil {
		return ch, err
	}
	present := func(name string) (json.RawMessage, bool) {
		raw, ok := body[name]
		return raw, ok
	}
	str := func(name string) (*string, error) {
		raw, ok := present(name)
		if !ok || input.IsNull(raw) {
			return nil, nil
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, input.BadRequest(name, "must be a string")
		}
		return &v, nil
	}

	if name, err := str("name"); err != nil {
		return ch, err
	} else if name != nil || creating || isNull(body, "name") {
		if name == nil || strings.TrimSpace(*name) == "" {
			return ch, input.BadRequest("name", "is required")
		}
		if utf8.RuneCountInString(*name) > MaxEndpointName {
			return ch, input.BadRequestf("name", "at most %d characters", MaxEndpointName)
		}
		e.Name = *name
	}
	if desc, err := str("description"); err != nil {
		return ch, err
	} else if _, ok := present("description"); ok {
		e.Description = ""
		if desc != nil {
			if utf8.RuneCountInString(*desc) > MaxEndpointDescription {
				return ch, input.BadRequestf("description", "at most %d characters", MaxEndpointDescription)
			}
			e.Description = *desc
		}
	}
	oldURL := e.URL
	if u, err := str("url"); err != nil {
		return ch, err
	} else if u != nil || creating || isNull(body, "url") {
		if u == nil {
			return ch, input.BadRequest("url", "is required")
		}
		if redact.HasMask(*u) {
			v, err := s.redact.RestoreValue("url", *u, oldURL)
			if err != nil {
				return ch, restoreError(err)
			}
			restored, _ := v.(string)
			u = &restored
		}
		// A broker URL (nats://, amqp://, kafka://, redis:// and their TLS
		// schemes) makes a broker endpoint, for the broker action types.
		if kind := outbound.BrokerKind(*u); kind != "" {
			if _, err := outbound.CheckBrokerURL(kind, *u, s.opts.Outbound); err != nil {
				return ch, input.BadRequest("url", err.Error())
			}
		} else if err := outbound.CheckURL(*u, s.opts.Outbound); err != nil {
			return ch, input.BadRequest("url", err.Error())
		}
		e.URL = *u
	}
	urlChanged := !creating && e.URL != oldURL
	if _, ok := present("secret"); ok {
		if !creating {
			return ch, input.BadRequest("secret", "cannot be changed here; use POST /endpoints/{id}/rotate-secret")
		}
		secret, err := str("secret")
		if err != nil {
			return ch, err
		}
		if secret != nil {
			if err := events.CheckSecret("secret", *secret, events.MinSecretKey); err != nil {
				return ch, err
			}
			ch.Secret = *secret
		}
	}
	if raw, ok := present("tags"); ok {
		var tags []string
		if !input.IsNull(raw) {
			if err := json.Unmarshal(raw, &tags); err != nil {
				return ch, input.BadRequest("tags", "must be an array of strings")
			}
		}
		checked, err := calendar.CheckTags(tags)
		if err != nil {
			return ch, err
		}
		e.Tags = checked
	} else if e.Tags == nil {
		e.Tags = []string{}
	}
	if raw, ok := present("headers"); ok {
		headers := map[string]string{}
		if !input.IsNull(raw) {
			if err := json.Unmarshal(raw, &headers); err != nil {
				return ch, input.BadRequest("headers", "must be an object of strings")
			}
		}
		if err := s.restoreHeaders(headers, e.Headers, urlChanged); err != nil {
			return ch, err
		}
		if err := actions.ValidateHeaders(headers); err != nil {
			var pe *actions.ParamError
			if errors.As(err, &pe) {
				return ch, input.BadRequest(pe.Param, pe.Reason)
			}
			return ch, err
		}
		e.Headers = headers
	} else if e.Headers == nil {
		e.Headers = map[string]string{}
	} else if urlChanged {
		// Header values are credentials as much as a password is: they do
		// not follow a new url unless sent again.
		if names := sortedNames(e.Headers); len(names) > 0 {
			return ch, errSecretAgain("headers."+names[0], "url")
		}
	}
	if raw, ok := present("rate_limit"); ok {
		rl, err := decodeRateLimit(raw)
		if err != nil {
			return ch, err
		}
		e.RateLimit = rl
	}
	if raw, ok := present("max_concurrency"); ok {
		n := 0
		if !input.IsNull(raw) {
			if err := json.Unmarshal(raw, &n); err != nil {
				return ch, input.BadRequest("max_concurrency", "must be an integer")
			}
		}
		if n < 0 || n > MaxEndpointConcurrency {
			return ch, input.BadRequestf("max_concurrency", "must be between 0 (unlimited) and %d", MaxEndpointConcurrency)
		}
		e.MaxConcurrency = n
	}
	if _, ok := present("timeout"); ok {
		text, err := str("timeout")
		if err != nil {
			return ch, err
		}
		e.TimeoutMS = 0
		if text != nil {
			d, err := input.ParseDuration("timeout", *text, time.Second, s.opts.MaxTimeout)
			if err != nil {
				return ch, err
			}
			e.TimeoutMS = d.Milliseconds()
		}
	}
	if raw, ok := present("circuit"); ok {
		c, err := decodeCircuit(raw)
		if err != nil {
			return ch, err
		}
		e.Circuit = c
	}
	ch.AuthSecrets = stored
	if raw, ok := present("auth"); ok {
		auth, secrets, err := s.decodeAuth(raw, e.Auth, stored, urlChanged)
		if err != nil {
			return ch, err
		}
		e.Auth, ch.AuthSecrets, ch.AuthChanged = auth, secrets, true
	} else if field := urlSecret[authType(e.Auth)]; urlChanged && field != "" {
		return ch, errSecretAgain("auth."+field, "url")
	}
	if kind := outbound.BrokerKind(e.URL); kind != "" && e.Auth != nil {
		switch e.Auth.Type {
		case model.AuthOAuth2ClientCredentials:
			return ch, input.BadRequest("auth.type", "oauth2_client_credentials is for HTTP endpoints; a broker takes basic or mtls")
		case model.AuthMTLS:
			if addr, _ := outbound.CheckBrokerURL(kind, e.URL, s.opts.Outbound); !addr.TLS {
				return ch, input.BadRequestf("url", "mtls needs the broker's TLS scheme (%s://)", outbound.BrokerSchemes[kind].TLS)
			}
		}
	}
	if e.Auth != nil {
		for name := range e.Headers {
			if http.CanonicalHeaderKey(name) == "Authorization" {
				return ch, input.BadRequest("headers."+name, "set by the endpoint's auth, not allowed beside it")
			}
		}
	}
	return ch, nil
}

// restoreHeaders puts back the stored values behind header fingerprints
// sent back as answers show them; refused when the url changed.
func (s *Service) restoreHeaders(sent, stored map[string]string, urlChanged bool) error {
	for _, name := range sortedNames(sent) {
		v := sent[name]
		if !redact.HasMask(v) {
			continue
		}
		old, ok := stored[name]
		switch {
		case ok && v == s.redact.Fingerprint(old) && urlChanged:
			return errSecretAgain("headers."+name, "url")
		case ok && v == s.redact.Fingerprint(old):
			sent[name] = old
		default:
			return restoreError(&redact.RestoreError{Field: "headers." + name})
		}
	}
	return nil
}

func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// isNull reports whether a member is present as JSON null.
func isNull(body map[string]json.RawMessage, name string) bool {
	raw, ok := body[name]
	return ok && input.IsNull(raw)
}

// decodeRateLimit reads rate_limit: null lifts the limit; burst defaults to
// the rate rounded up.
func decodeRateLimit(raw json.RawMessage) (*model.RateLimit, error) {
	if input.IsNull(raw) {
		return nil, nil
	}
	var in rateLimitInput
	if err := input.DecodeStrict(raw, "rate_limit", &in); err != nil {
		return nil, err
	}
	if in.PerSecond == nil {
		return nil, input.BadRequest("rate_limit.per_second", "is required")
	}
	rate := *in.PerSecond
	if !(rate > 0) || rate > MaxRatePerSecond {
		return nil, input.BadRequestf("rate_limit.per_second", "must be above 0 and at most %d", MaxRatePerSecond)
	}
	burst := int(math.Ceil(rate))
	if in.Burst != nil {
		burst = *in.Burst
		if burst < 1 || burst > MaxRatePerSecond {
			return nil, input.BadRequestf("rate_limit.burst", "must be between 1 and %d", MaxRatePerSecond)
		}
	}
	return &model.RateLimit{PerSecond: rate, Burst: burst}, nil
}

// decodeCircuit reads circuit: null (or {}) takes the deployment's
// defaults.
func decodeCircuit(raw json.RawMessage) (*model.Circuit, error) {
	if input.IsNull(raw) {
		return nil, nil
	}
	var in circuitInput
	if err := input.DecodeStrict(raw, "circuit", &in); err != nil {
		return nil, err
	}
	c := &model.Circuit{}
	for _, f := range []struct {
		name    string
		v       *int
		dst     *int
		highest int
	}{
		{"circuit.failures", in.Failures, &c.Failures, 100000},
		{"circuit.min_requests", in.MinRequests, &c.MinRequests, 100000},
	} {
		if f.v == nil {
			continue
		}
		if *f.v < 1 || *f.v > f.highest {
			return nil, input.BadRequestf(f.name, "must be between 1 and %d", f.highest)
		}
		*f.dst = *f.v
	}
	if in.FailureRatio != nil {
		if r := *in.FailureRatio; !(r > 0) || r > 1 {
			return nil, input.BadRequest("circuit.failure_ratio", "must be above 0 and at most 1")
		}
		c.FailureRatio = *in.FailureRatio
	}
	for _, f := range []struct {
		name   string
		text   *string
		dst    *time.Duration
		lo, hi time.Duration
	}{
		{"circuit.window", in.Window, &c.Window, time.Second, 24 * time.Hour},
		{"circuit.cool_down", in.CoolDown, &c.CoolDown, time.Second, 24 * time.Hour},
		{"circuit.disable_after", in.DisableAfter, &c.DisableAfter, time.Minute, 90 * 24 * time.Hour},
	} {
		if f.text == nil {
			continue
		}
		d, err := input.ParseDuration(f.name, *f.text, f.lo, f.hi)
		if err != nil {
			return nil, err
		}
		*f.dst = d
	}
	if *c == (model.Circuit{}) {
		return nil, nil
	}
	return c, nil
}

// authFields are the fields each auth type takes besides type.
var authFields = map[string]map[string]bool{
	model.AuthBasic:                   input.Set("username", "password"),
	model.AuthOAuth2ClientCredentials: input.Set("token_url", "client_id", "client_secret", "scopes", "audience"),
	model.AuthMTLS:                    input.Set("certificate", "private_key", "ca_certificate"),
}

// urlSecret names, per auth type, the stored secret whose credential goes
// to the endpoint's url: a basic-auth password, and an OAuth2 client
// secret, whose bearer tokens are sent there (a token is as good as the
// secret to whoever receives it while it lasts). An mTLS private key never
// leaves the process.
var urlSecret = map[string]string{
	model.AuthBasic:                   "password",
	model.AuthOAuth2ClientCredentials: "client_secret",
}

func authType(a *model.EndpointAuth) string {
	if a == nil {
		return ""
	}
	return a.Type
}

// errSecretAgain refuses a change that would send a stored secret to a new
// destination: a secret is kept only while the URL it is sent to stays.
func errSecretAgain(field, destination string) error {
	return input.BadRequestf(field, "must be given again: %s changed, and a stored secret is never sent to a new "+
		"destination", destination)
}

// decodeAuth reads auth: null removes it. A secret field omitted while the
// type and the secret's destination stay the same keeps its stored value
// (old, stored); urlChanged says the endpoint's url (where a basic-auth
// password and an OAuth2 client secret's tokens go) changed in the same
// request.
func (s *Service) decodeAuth(raw json.RawMessage, old *model.EndpointAuth, stored *model.EndpointAuthSecrets,
	urlChanged bool) (*model.EndpointAuth, *model.EndpointAuthSecrets, error) {
	if input.IsNull(raw) {
		return nil, nil, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, nil, input.BadRequest("auth", "must be an object")
	}
	var in authInput
	if err := input.DecodeStrict(raw, "auth", &in); err != nil {
		return nil, nil, err
	}
	fields, ok := authFields[in.Type]
	if !ok {
		return nil, nil, input.BadRequestf("auth.type", `must be "%s", "%s" or "%s"`, model.AuthBasic,
			model.AuthOAuth2ClientCredentials, model.AuthMTLS)
	}
	for name, v := range members {
		if name != "type" && !fields[name] && !input.IsNull(v) {
			return nil, nil, input.BadRequestf("auth."+name, "not a field of %s auth", in.Type)
		}
	}
	keep := model.EndpointAuthSecrets{}
	if old != nil && old.Type == in.Type && stored != nil {
		keep = *stored
	}
	// moved names what changed when the destination of a kept secret did.
	secret := func(name string, v *string, kept, moved string) (string, error) {
		if v == nil {
			if kept == "" {
				return "", input.BadRequest("auth."+name, "is required")
			}
			if moved != "" {
				return "", errSecretAgain("auth."+name, moved)
			}
			return kept, nil
		}
		if *v == "" || len(*v) > maxAuthText {
			return "", input.BadRequestf("auth."+name, "must be 1 to %d bytes", maxAuthText)
		}
		return *v, nil
	}
	text := func(name string, v *string, required bool, limit int) (string, error) {
		if v == nil || *v == "" {
			if required {
				return "", input.BadRequest("auth."+name, "is required")
			}
			return "", nil
		}
		if len(*v) > limit {
			return "", input.BadRequestf("auth."+name, "at most %d bytes", limit)
		}
		return *v, nil
	}
	auth := &model.EndpointAuth{Type: in.Type}
	sec := &model.EndpointAuthSecrets{}
	var err error
	switch in.Type {
	case model.AuthBasic:
		if auth.Username, err = text("username", in.Username, true, maxAuthText); err != nil {
			return nil, nil, err
		}
		if strings.Contains(auth.Username, ":") {
			return nil, nil, input.BadRequest("auth.username", "must not contain a colon")
		}
		moved := ""
		if urlChanged {
			moved = "url"
		}
		if sec.Password, err = secret("password", in.Password, keep.Password, moved); err != nil {
			return nil, nil, err
		}
	case model.AuthOAuth2ClientCredentials:
		if in.TokenURL != nil && redact.HasMask(*in.TokenURL) {
			oldURL := ""
			if old != nil {
				oldURL = old.TokenURL
			}
			v, err := s.redact.RestoreValue("auth.token_url", *in.TokenURL, oldURL)
			if err != nil {
				return nil, nil, restoreError(err)
			}
			restored, _ := v.(string)
			in.TokenURL = &restored
		}
		if auth.TokenURL, err = text("token_url", in.TokenURL, true, outbound.MaxURLLength); err != nil {
			return nil, nil, err
		}
		if err := outbound.CheckURL(auth.TokenURL, s.opts.Outbound); err != nil {
			return nil, nil, input.BadRequest("auth.token_url", err.Error())
		}
		if auth.ClientID, err = text("client_id", in.ClientID, true, maxAuthText); err != nil {
			return nil, nil, err
		}
		moved := ""
		switch {
		case old != nil && old.TokenURL != auth.TokenURL:
			moved = "auth.token_url"
		case urlChanged:
			moved = "url"
		}
		if sec.ClientSecret, err = secret("client_secret", in.ClientSecret, keep.ClientSecret, moved); err != nil {
			return nil, nil, err
		}
		if auth.Audience, err = text("audience", in.Audience, false, maxAuthText); err != nil {
			return nil, nil, err
		}
		if len(in.Scopes) > maxScopes {
			return nil, nil, input.BadRequestf("auth.scopes", "at most %d scopes", maxScopes)
		}
		for _, sc := range in.Scopes {
			if sc == "" || strings.ContainsAny(sc, " \t\r\n") || len(sc) > maxAuthText {
				return nil, nil, input.BadRequestf("auth.scopes", "scope %q must be non-empty without spaces", sc)
			}
		}
		auth.Scopes = in.Scopes
	case model.AuthMTLS:
		if auth.Certificate, err = text("certificate", in.Certificate, true, maxPEM); err != nil {
			return nil, nil, err
		}
		key := keep.PrivateKey
		if in.PrivateKey != nil {
			if *in.PrivateKey == "" || len(*in.PrivateKey) > maxPEM {
				return nil, nil, input.BadRequestf("auth.private_key", "must be 1 to %d bytes", maxPEM)
			}
			key = *in.PrivateKey
		}
		if key == "" {
			return nil, nil, input.BadRequest("auth.private_key", "is required")
		}
		if _, err := tls.X509KeyPair([]byte(auth.Certificate), []byte(key)); err != nil {
			field := "auth.certificate"
			if in.PrivateKey != nil {
				field = "auth.private_key"
			}
			// The parser's message never quotes the key's bytes.
			return nil, nil, input.BadRequest(field, "certificate and private key do not load as a pair: "+err.Error())
		}
		sec.PrivateKey = key
		if auth.CACertificate, err = text("ca_certificate", in.CACertificate, false, maxPEM); err != nil {
			return nil, nil, err
		}
		if auth.CACertificate != "" && !x509.NewCertPool().AppendCertsFromPEM([]byte(auth.CACertificate)) {
			return nil, nil, input.BadRequest("auth.ca_certificate", "no PEM certificate found")
		}
	}
	return auth, sec, nil
}
