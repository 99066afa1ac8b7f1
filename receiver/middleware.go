package receiver

import (
	"bytes"
	"errors"
	"io"
	"net/http"
)

// Middleware verifies every request before next sees it. A request that
// fails verification is answered 401 with the reason (never a secret) and
// next is not called; a body over the bound is answered 413. next reads the
// verified body from r.Body as usual: decrypted, with Content-Type
// application/json, when the delivery is encrypted and the Verifier has
// decryption keys (WithDecryptionKeys); a key that does not open it is
// answered 500 (the receiver's configuration, so Qhronos retries).
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, v.maxBody+1))
		if err != nil {
			http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if int64(len(body)) > v.maxBody {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		if err := v.Verify(r.Header, body); err != nil {
			status := http.StatusUnauthorized
			if errors.Is(err, ErrNoSecret) {
				status = http.StatusInternalServerError
			}
			http.Error(w, "signature verification failed: "+err.Error(), status)
			return
		}
		if IsEncrypted(r.Header) && len(v.privateKeys) > 0 {
			// Verified: now the payload. A key that does not fit is the
			// receiver's configuration, so 500 lets Qhronos retry once it
			// is fixed.
			plain, err := Decrypt(body, v.privateKeys...)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			body = plain
			r.Header.Set("Content-Type", "application/json")
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}
