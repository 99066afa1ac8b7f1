package outbound

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// TokenFetchTimeout bounds one token request. Concurrent deliveries wait on
// the same fetch, so it is not tied to any one delivery's deadline.
const TokenFetchTimeout = 30 * time.Second

// oauth2Transport authenticates requests with a client-credentials bearer
// token, cached until shortly before it expires (oauth2.ReuseTokenSource)
// and dropped when a receiver answers 401, so a revoked token does not stick
// until its expiry.
type oauth2Transport struct {
	base  *http.Transport
	fetch oauth2.TokenSource // uncached: one token request per call

	mu      sync.Mutex
	cache   oauth2.TokenSource
	dropped string // the access token last dropped on a 401
}

func newOAuth2Transport(base *http.Transport, a Auth) *oauth2Transport {
	cfg := &clientcredentials.Config{
		ClientID:     a.ClientID,
		ClientSecret: a.ClientSecret,
		TokenURL:     a.TokenURL,
		Scopes:       a.Scopes,
	}
	if a.Audience != "" {
		cfg.EndpointParams = url.Values{"audience": {a.Audience}}
	}
	// The token URL is user input: its request goes through the same
	// guarded transport, never following redirects.
	tokenClient := &http.Client{
		Transport:     base,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	fetch := &tokenFetcher{cfg: cfg, client: tokenClient}
	return &oauth2Transport{base: base, fetch: fetch, cache: oauth2.ReuseTokenSource(nil, fetch)}
}

func (t *oauth2Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	src := t.cache
	t.mu.Unlock()
	tok, err := src.Token()
	if err != nil {
		if r.Body != nil {
			r.Body.Close() // RoundTrip closes the body, even on errors
		}
		return nil, err
	}
	r = r.Clone(r.Context())
	tok.SetAuthHeader(r)
	resp, err := t.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.drop(tok.AccessToken)
	}
	return resp, err
}

// drop forgets the cached token if it is still access: concurrent 401s for
// one token cause a single new fetch.
func (t *oauth2Transport) drop(access string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped == access {
		return
	}
	t.dropped = access
	t.cache = oauth2.ReuseTokenSource(nil, t.fetch)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the pool
// (the token requests share it).
func (t *oauth2Transport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// tokenFetcher requests a new token on every call.
type tokenFetcher struct {
	cfg    *clientcredentials.Config
	client *http.Client
}

func (f *tokenFetcher) Token() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), TokenFetchTimeout)
	defer cancel()
	tok, err := f.cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, f.client))
	if err != nil {
		return nil, tokenError(err)
	}
	return tok, nil
}

// oauthErrorCode matches RFC 6749 error codes ("invalid_client"); anything
// else a token endpoint says is left out.
var oauthErrorCode = regexp.MustCompile(`^[a-z_]{1,64}$`)

// tokenError rewrites a token request failure without the token endpoint's
// body (which may echo the request or carry a token) and keeps policy
// refusals (*BlockedError) and timeouts reachable with errors.As/Is.
func tokenError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		if oauthErrorCode.MatchString(re.ErrorCode) {
			return fmt.Errorf("fetch oauth2 token: token endpoint answered %d (%s)", status, re.ErrorCode)
		}
		return fmt.Errorf("fetch oauth2 token: token endpoint answered %d", status)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("fetch oauth2 token: %w", ue.Err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("fetch oauth2 token: %w", context.DeadlineExceeded)
	}
	return errors.New("fetch oauth2 token: invalid token endpoint answer")
}
