package actions

import (
	"net/http"
	"time"

	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/redact"
)

// Defaults of the HTTP actions.
const (
	DefaultTimeout      = 30 * time.Second // per attempt, when Request.Timeout is 0
	DefaultExcerptLimit = 64 << 10         // bytes of response body kept
)

// HTTPConfig is what the webhook and apicall actions share. Build it once in
// main; Client should come from outbound.NewClient with the same Outbound
// options so create-time and dial-time checks agree.
type HTTPConfig struct {
	// Client sends requests. Nil means outbound.NewClient(Outbound).
	Client *http.Client
	// Outbound is the policy CheckURL applies at validation.
	Outbound outbound.Options
	// ExcerptLimit bounds the response bytes read and kept, decoded or not.
	ExcerptLimit int
	// Version goes into User-Agent: Qhronos/<version>.
	Version string
	// Redactor shows the recorded request's secrets as the rest of the
	// product does (fingerprints keyed by secrets.encryption_key). Nil
	// means a key of this process only.
	Redactor *redact.Redactor
	// OmitRequests keeps no request with the attempts
	// (outbound.record_requests: false).
	OmitRequests bool
	// Now stamps webhook-timestamp and resolves HTTP-date Retry-After
	// values. Nil means time.Now.
	Now func() time.Time
}

func (c HTTPConfig) withDefaults() HTTPConfig {
	if c.Client == nil {
		c.Client = outbound.NewClient(c.Outbound)
	}
	if c.ExcerptLimit <= 0 {
		c.ExcerptLimit = DefaultExcerptLimit
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

func (c HTTPConfig) userAgent() string { return "Qhronos/" + c.Version }

// validateURL applies the outbound create-time check to a url param.
func validateURL(param, raw string, opts outbound.Options) error {
	if err := outbound.CheckURL(raw, opts); err != nil {
		return &ParamError{Param: param, Reason: err.Error()}
	}
	return nil
}
