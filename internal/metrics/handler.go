package metrics

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the exposition format. With a non-empty token every scrape
// must carry "Authorization: Bearer <token>" (compared in constant time);
// anything else answers 401 with a JSON error, so tenant-free but
// operationally sensitive figures are not public by accident.
func (m *Metrics) Handler(token string) http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	if token == "" {
		return h
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := r.Header.Get("Authorization")
		got, ok := strings.CutPrefix(header, "Bearer ")
		if !ok {
			got, ok = strings.CutPrefix(header, "bearer ")
		}
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		// Comparing digests keeps the comparison constant-time in the token's
		// length too.
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"metrics: a valid bearer token is required"}`))
			return
		}
		h.ServeHTTP(w, r)
	})
}
