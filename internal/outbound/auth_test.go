package outbound_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/outbound/outboundtest"
)

var loopback = outbound.Options{AllowLoopback: true}

const (
	testClientID     = "qhronos-client"
	testClientSecret = "s3cr3t-client-value"
	testAudience     = "https://api.example.com"
)

// tokenServer is a loopback OAuth2 token endpoint that checks the client
// credentials request and issues tok-1, tok-2 … with expiresIn(n) seconds.
type tokenServer struct {
	*httptest.Server
	requests atomic.Int32
}

func newTokenServer(t *testing.T, expiresIn func(n int32) int) *tokenServer {
	t.Helper()
	ts := &tokenServer{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Errorf("token request form: %v", err)
		}
		id, secret, ok := r.BasicAuth()
		if ok { // the header form URL-encodes both (RFC 6749 §2.3.1)
			id, _ = url.QueryUnescape(id)
			secret, _ = url.QueryUnescape(secret)
		} else {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		for name, got := range map[string][2]string{
			"client_id":     {id, testClientID},
			"client_secret": {secret, testClientSecret},
			"grant_type":    {r.PostForm.Get("grant_type"), "client_credentials"},
			"scope":         {r.PostForm.Get("scope"), "events:write reports"},
			"audience":      {r.PostForm.Get("audience"), testAudience},
			"method":        {r.Method, http.MethodPost},
		} {
			if got[0] != got[1] {
				t.Errorf("token request %s = %q, want %q", name, got[0], got[1])
				w.WriteHeader(http.StatusBadRequest)
				return
			}
		}
		n := ts.requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"access_token": fmt.Sprintf("tok-%d", n), "token_type": "bearer", "expires_in": expiresIn(n),
		})
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tokenServer) auth() outbound.Auth {
	return outbound.Auth{
		Type: outbound.AuthOAuth2ClientCredentials, TokenURL: ts.URL + "/oauth/token",
		ClientID: testClientID, ClientSecret: testClientSecret,
		Scopes: []string{"events:write", "reports"}, Audience: testAudience,
	}
}

// authReceiver records the Authorization header of each request and answers
// status(header).
func authReceiver(t *testing.T, status func(authorization string) int) (*httptest.Server, *seenHeaders) {
	t.Helper()
	seen := &seenHeaders{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.add(r.Header.Get("Authorization"))
		w.WriteHeader(status(r.Header.Get("Authorization")))
	}))
	t.Cleanup(srv.Close)
	return srv, seen
}

// seenHeaders collects header values across handler goroutines.
type seenHeaders struct {
	mu     sync.Mutex
	values []string
}

func (s *seenHeaders) add(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values = append(s.values, v)
}

func (s *seenHeaders) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.values...)
}

func newAuthClient(t *testing.T, opts outbound.Options, a outbound.Auth) *http.Client {
	t.Helper()
	c, err := outbound.NewAuthClient(opts, a)
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// get sends one request and returns its status.
func get(t *testing.T, c *http.Client, target string) int {
	t.Helper()
	resp, err := c.Get(target)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestOAuth2TokenCachedUntilExpiry(t *testing.T) {
	t.Parallel()
	// tok-1 lives 1 s, already inside oauth2's 10 s early-expiry margin when
	// it arrives: it is used once and replaced by the next delivery, with no
	// clock involved. tok-2 lives an hour.
	ts := newTokenServer(t, func(n int32) int {
		if n == 1 {
			return 1
		}
		return 3600
	})
	rcv, seen := authReceiver(t, func(string) int { return http.StatusOK })
	c := newAuthClient(t, loopback, ts.auth())

	for range 5 {
		require.Equal(t, http.StatusOK, get(t, c, rcv.URL))
	}
	if got, want := seen.all(), []string{"Bearer tok-1", "Bearer tok-2", "Bearer tok-2", "Bearer tok-2", "Bearer tok-2"}; !equal(got, want) {
		t.Errorf("receiver saw %q, want %q", got, want)
	}
	if got := ts.requests.Load(); got != 2 {
		t.Errorf("token requests = %d, want 2 (one per token lifetime)", got)
	}

	// Concurrent deliveries share the cached token too.
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			resp, err := c.Get(rcv.URL)
			if err != nil {
				t.Errorf("concurrent delivery: %v", err)
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	if got := ts.requests.Load(); got != 2 {
		t.Errorf("token requests after concurrent deliveries = %d, want still 2", got)
	}
	for _, a := range seen.all()[5:] {
		if a != "Bearer tok-2" {
			t.Errorf("concurrent delivery sent %q, want Bearer tok-2", a)
		}
	}
}

func TestOAuth2TokenDroppedAfter401(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, func(int32) int { return 3600 })
	// The receiver revoked tok-1.
	rcv, seen := authReceiver(t, func(a string) int {
		if a == "Bearer tok-1" {
			return http.StatusUnauthorized
		}
		return http.StatusOK
	})
	c := newAuthClient(t, loopback, ts.auth())

	require.Equal(t, http.StatusUnauthorized, get(t, c, rcv.URL))
	require.Equal(t, http.StatusOK, get(t, c, rcv.URL))
	require.Equal(t, http.StatusOK, get(t, c, rcv.URL))
	if got, want := seen.all(), []string{"Bearer tok-1", "Bearer tok-2", "Bearer tok-2"}; !equal(got, want) {
		t.Errorf("receiver saw %q, want %q", got, want)
	}
	if got := ts.requests.Load(); got != 2 {
		t.Errorf("token requests = %d, want 2 (a fresh token after the 401 only)", got)
	}
}

func TestOAuth2TokenFailureIsATransportErrorWithoutSecrets(t *testing.T) {
	t.Parallel()
	answers := map[string]func(w http.ResponseWriter){
		"401 echoing the request": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":"invalid_client","error_description":"bad secret %s","access_token":"tok-leaked"}`, testClientSecret)
		},
		"200 without a token": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"token_type":"bearer","note":"%s tok-leaked"}`, testClientSecret)
		},
		"302 redirect": func(w http.ResponseWriter) {
			w.Header().Set("Location", "http://169.254.169.254/latest/meta-data/")
			w.WriteHeader(http.StatusFound)
		},
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { answer(w) }))
			t.Cleanup(tokens.Close)
			rcv, seen := authReceiver(t, func(string) int { return http.StatusOK })
			c := newAuthClient(t, loopback, outbound.Auth{
				Type: outbound.AuthOAuth2ClientCredentials, TokenURL: tokens.URL,
				ClientID: testClientID, ClientSecret: testClientSecret,
			})

			body := &closeRecorder{Reader: strings.NewReader("payload")}
			req, err := http.NewRequest(http.MethodPost, rcv.URL, body)
			require.NoError(t, err)
			resp, err := c.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			require.Error(t, err, "a failed token fetch fails the request")
			var ue *url.Error
			require.ErrorAs(t, err, &ue, "surfaces as a transport error")
			var blocked *outbound.BlockedError
			if errors.As(err, &blocked) {
				t.Errorf("token failure = %v, want a retryable error, not a policy refusal", err)
			}
			for _, secret := range []string{testClientSecret, "tok-leaked"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q contains %q", err, secret)
				}
			}
			if len(seen.all()) != 0 {
				t.Errorf("receiver got %d requests without a token, want 0", len(seen.all()))
			}
			if !body.closed.Load() {
				t.Error("request body not closed")
			}
		})
	}
}

func TestOAuth2TokenURLOnBlockedAddress(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, func(int32) int { return 3600 })
	a := ts.auth()

	// A literal loopback token URL is refused before any request.
	var fe *outbound.FieldError
	require.ErrorAs(t, outbound.ValidateAuth(outbound.Options{}, a), &fe)
	if fe.Field != "auth.token_url" || !strings.Contains(fe.Reason, "loopback") {
		t.Errorf("ValidateAuth = %v, want auth.token_url refused as loopback", fe)
	}
	_, err := outbound.NewAuthClient(outbound.Options{}, a)
	require.ErrorAs(t, err, &fe)

	// A name resolving to loopback passes that check but not the dial.
	u, err := url.Parse(ts.URL)
	require.NoError(t, err)
	a.TokenURL = "http://tokens.example.com:" + u.Port() + "/oauth/token"
	c := newAuthClient(t, outbound.Options{
		Resolver: fakeResolver{addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}},
	}, a)
	resp, err := c.Get("https://receiver.example.com/hook")
	if resp != nil {
		resp.Body.Close()
	}
	var blocked *outbound.BlockedError
	require.ErrorAs(t, err, &blocked)
	if got := ts.requests.Load(); got != 0 {
		t.Errorf("token server got %d requests, want 0", got)
	}
}

func TestBasicAuthSeenByReceiver(t *testing.T) {
	t.Parallel()
	type creds struct {
		user, pass string
		ok         bool
	}
	got := make(chan creds, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		got <- creds{u, p, ok}
	}))
	t.Cleanup(srv.Close)
	c := newAuthClient(t, loopback, outbound.Auth{Type: outbound.AuthBasic, Username: "qhronos", Password: "pa:ss wörd"})

	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	if g := <-got; g != (creds{"qhronos", "pa:ss wörd", true}) {
		t.Errorf("receiver saw basic auth %+v, want qhronos / pa:ss wörd", g)
	}
	if h := req.Header.Get("Authorization"); h != "" {
		t.Errorf("caller's request was modified: Authorization = %q", h)
	}
}

func TestMTLSClientCertificate(t *testing.T) {
	t.Parallel()
	receiverCA := outboundtest.NewPKI(t, "receiver CA")
	clientCA := outboundtest.NewPKI(t, "client CA")
	peers := make(chan string, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peers <- r.TLS.PeerCertificates[0].Subject.CommonName
	}))
	srv.TLS = receiverCA.ServerTLS(t, tls.RequireAndVerifyClientCert)
	srv.TLS.ClientCAs = clientCA.Pool()              // clients carry certificates of another CA
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
	srv.StartTLS()
	t.Cleanup(srv.Close)

	certPEM, keyPEM := clientCA.Issue(t, "qhronos-endpoint", false)
	c := newAuthClient(t, loopback, outbound.Auth{
		Type: outbound.AuthMTLS, CertificatePEM: certPEM, PrivateKeyPEM: keyPEM, CACertificatePEM: receiverCA.CAPEM,
	})
	require.Equal(t, http.StatusOK, get(t, c, srv.URL))
	if cn := <-peers; cn != "qhronos-endpoint" {
		t.Errorf("receiver saw client certificate %q, want qhronos-endpoint", cn)
	}

	// Trusting the receiver is not enough without the certificate …
	plain := newAuthClient(t, outbound.Options{AllowLoopback: true, TLSClientConfig: &tls.Config{RootCAs: receiverCA.Pool()}}, outbound.Auth{})
	// … nor with one from another CA.
	otherCert, otherKey := outboundtest.NewPKI(t, "other CA").Issue(t, "intruder", false)
	other := newAuthClient(t, loopback, outbound.Auth{
		Type: outbound.AuthMTLS, CertificatePEM: otherCert, PrivateKeyPEM: otherKey, CACertificatePEM: receiverCA.CAPEM,
	})
	for name, client := range map[string]*http.Client{"no certificate": plain, "untrusted certificate": other} {
		resp, err := client.Get(srv.URL)
		if resp != nil {
			resp.Body.Close()
		}
		if err == nil {
			t.Errorf("%s: receiver accepted the request", name)
		}
	}
	select {
	case cn := <-peers:
		t.Errorf("handler reached by %q, want only the endpoint's certificate", cn)
	default:
	}

	// The operator's roots (outbound TLS config) stay trusted, alone or
	// with the endpoint's CA.
	for name, a := range map[string]outbound.Auth{
		"operator roots": {Type: outbound.AuthMTLS, CertificatePEM: certPEM, PrivateKeyPEM: keyPEM},
		"operator roots and endpoint CA": {
			Type: outbound.AuthMTLS, CertificatePEM: certPEM, PrivateKeyPEM: keyPEM, CACertificatePEM: outboundtest.NewPKI(t, "unrelated CA").CAPEM,
		},
	} {
		withRoots := newAuthClient(t, outbound.Options{AllowLoopback: true, TLSClientConfig: &tls.Config{RootCAs: receiverCA.Pool()}}, a)
		if got := get(t, withRoots, srv.URL); got != http.StatusOK {
			t.Errorf("%s: status %d, want 200", name, got)
		}
		<-peers
	}

	// Without CACertificatePEM the receiver's private CA is not trusted.
	untrusting := newAuthClient(t, loopback, outbound.Auth{Type: outbound.AuthMTLS, CertificatePEM: certPEM, PrivateKeyPEM: keyPEM})
	resp, err := untrusting.Get(srv.URL)
	if resp != nil {
		resp.Body.Close()
	}
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("without the CA: %v, want an unknown authority error", err)
	}
}

func TestValidateAuth(t *testing.T) {
	t.Parallel()
	ca := outboundtest.NewPKI(t, "client CA")
	certPEM, keyPEM := ca.Issue(t, "c", false)
	_, otherKey := ca.Issue(t, "d", false)
	oauth := outbound.Auth{Type: outbound.AuthOAuth2ClientCredentials, TokenURL: "https://auth.example.com/token", ClientID: "id", ClientSecret: "hunter2-xyz"}
	mtls := outbound.Auth{Type: outbound.AuthMTLS, CertificatePEM: certPEM, PrivateKeyPEM: keyPEM}
	with := func(a outbound.Auth, mod func(*outbound.Auth)) outbound.Auth { mod(&a); return a }

	tests := []struct {
		name      string
		auth      outbound.Auth
		wantField string // "" = valid
	}{
		{"none", outbound.Auth{}, ""},
		{"unknown type", outbound.Auth{Type: "digest"}, "auth.type"},
		{"basic", outbound.Auth{Type: outbound.AuthBasic, Username: "u", Password: "p"}, ""},
		{"basic without username", outbound.Auth{Type: outbound.AuthBasic, Password: "p"}, "auth.username"},
		{"basic username with colon", outbound.Auth{Type: outbound.AuthBasic, Username: "a:b"}, "auth.username"},
		{"oauth2", oauth, ""},
		{"oauth2 with scopes", with(oauth, func(a *outbound.Auth) { a.Scopes = []string{"a", "b:c"} }), ""},
		{"oauth2 without token url", with(oauth, func(a *outbound.Auth) { a.TokenURL = "" }), "auth.token_url"},
		{"oauth2 file token url", with(oauth, func(a *outbound.Auth) { a.TokenURL = "file:///etc/passwd" }), "auth.token_url"},
		{"oauth2 metadata token url", with(oauth, func(a *outbound.Auth) { a.TokenURL = "http://169.254.169.254/token" }), "auth.token_url"},
		{"oauth2 without client id", with(oauth, func(a *outbound.Auth) { a.ClientID = "" }), "auth.client_id"},
		{"oauth2 without client secret", with(oauth, func(a *outbound.Auth) { a.ClientSecret = "" }), "auth.client_secret"},
		{"oauth2 scope with space", with(oauth, func(a *outbound.Auth) { a.Scopes = []string{"ok", "a b"} }), "auth.scopes[1]"},
		{"mtls", mtls, ""},
		{"mtls with ca", with(mtls, func(a *outbound.Auth) { a.CACertificatePEM = ca.CAPEM }), ""},
		{"mtls without certificate", with(mtls, func(a *outbound.Auth) { a.CertificatePEM = nil }), "auth.certificate"},
		{"mtls certificate not PEM", with(mtls, func(a *outbound.Auth) { a.CertificatePEM = []byte("hello") }), "auth.certificate"},
		{"mtls key as certificate", with(mtls, func(a *outbound.Auth) { a.CertificatePEM = keyPEM }), "auth.certificate"},
		{"mtls without key", with(mtls, func(a *outbound.Auth) { a.PrivateKeyPEM = nil }), "auth.private_key"},
		{"mtls key not PEM", with(mtls, func(a *outbound.Auth) { a.PrivateKeyPEM = []byte("hello") }), "auth.private_key"},
		{"mtls key of another certificate", with(mtls, func(a *outbound.Auth) { a.PrivateKeyPEM = otherKey }), "auth.private_key"},
		{"mtls ca not PEM", with(mtls, func(a *outbound.Auth) { a.CACertificatePEM = []byte("hello") }), "auth.ca_certificate"},
		{"mtls ca with trailing junk", with(mtls, func(a *outbound.Auth) { a.CACertificatePEM = append(append([]byte{}, ca.CAPEM...), "junk"...) }), "auth.ca_certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := outbound.ValidateAuth(outbound.Options{}, tc.auth)
			if tc.wantField == "" {
				require.NoError(t, err)
				c, err := outbound.NewAuthClient(outbound.Options{}, tc.auth)
				require.NoError(t, err, "NewAuthClient accepts what ValidateAuth accepts")
				c.CloseIdleConnections()
				return
			}
			var fe *outbound.FieldError
			require.ErrorAs(t, err, &fe)
			if fe.Field != tc.wantField {
				t.Errorf("ValidateAuth = %v, want field %s", err, tc.wantField)
			}
			if strings.Contains(err.Error(), "hunter2-xyz") || strings.Contains(err.Error(), "BEGIN") {
				t.Errorf("error %q quotes secret material", err)
			}
			_, err = outbound.NewAuthClient(outbound.Options{}, tc.auth)
			require.ErrorAs(t, err, &fe, "NewAuthClient refuses what ValidateAuth refuses")
		})
	}
}

// closeRecorder reports whether the transport closed a request body.
type closeRecorder struct {
	io.Reader
	closed atomic.Bool
}

func (c *closeRecorder) Close() error { c.closed.Store(true); return nil }

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
