package console

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// TestSecureCookieBehindATrustedProxy: auto marks the cookie Secure over
// TLS seen directly or reported by a trusted proxy, never on the word of
// anyone else; always marks it Secure everywhere.
func TestSecureCookieBehindATrustedProxy(t *testing.T) {
	t.Parallel()
	proxy := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		name, mode, peer, proto string
		tls, want               bool
	}{
		{"plain http", "auto", "192.0.2.1:5000", "", false, false},
		{"direct TLS", "auto", "192.0.2.1:5000", "", true, true},
		{"trusted proxy says https", "auto", "10.1.2.3:5000", "https", false, true},
		{"trusted proxy, list of hops", "auto", "10.1.2.3:5000", "HTTPS, http", false, true},
		{"trusted proxy says http", "auto", "10.1.2.3:5000", "http", false, false},
		{"untrusted peer says https", "auto", "192.0.2.1:5000", "https", false, false},
		{"always", "always", "192.0.2.1:5000", "", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(Options{API: newFakeAPI(), EncryptionKey: testKey, SecureCookie: tc.mode,
				TrustedProxies: proxy})
			require.NoError(t, err)
			t.Cleanup(c.Close)
			r := httptest.NewRequest("POST", "http://console.example/ui/login", nil)
			r.RemoteAddr = tc.peer
			if tc.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tc.proto)
			}
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			w := httptest.NewRecorder()
			require.NoError(t, c.sessions.start(w, r, testToken))
			for _, ck := range w.Result().Cookies() {
				require.Equal(t, tc.want, ck.Secure, "cookie %s", ck.Name)
			}
		})
	}
}

// TestSignOutEndsTheSessionOnEveryInstance: after signing out on one
// instance, the old cookie (as an attacker who captured it would replay
// it) signs nobody in on another instance sharing the store.
func TestSignOutEndsTheSessionOnEveryInstance(t *testing.T) {
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			store := b.Open(t)
			instance := func() *testConsole {
				tc := newTestConsole(t)
				c, err := New(Options{API: tc.api, EncryptionKey: testKey, Revocations: store})
				require.NoError(t, err)
				t.Cleanup(c.Close)
				tc.srv.Config.Handler, tc.c = c, c
				return tc
			}
			a, other := instance(), instance()
			session, csrf := a.signIn()
			res := other.get(session, "/ui/events")
			_ = body(t, res)
			require.Equal(t, http.StatusOK, res.StatusCode, "the cookie works on every instance")

			res = a.post(session, "/ui/logout", map[string][]string{"csrf": {csrf}}, "Origin", a.srv.URL)
			_ = body(t, res)
			require.Equal(t, http.StatusSeeOther, res.StatusCode)
			for _, tc := range []*testConsole{a, other} {
				res = tc.get(session, "/ui/events")
				_ = body(t, res)
				require.Equal(t, http.StatusSeeOther, res.StatusCode, "the old cookie still signs in")
				require.Equal(t, "/ui/login", res.Header.Get("Location"))
			}
		})
	}
}
