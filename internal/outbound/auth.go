package outbound

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Outbound authentication types (the values of model.EndpointAuth.Type).
const (
	AuthNone                    = ""
	AuthBasic                   = "basic"
	AuthOAuth2ClientCredentials = "oauth2_client_credentials"
	AuthMTLS                    = "mtls"
)

// Auth is an endpoint's outbound authentication in plaintext (the caller
// decrypts). Never log it.
type Auth struct {
	Type string // AuthNone, AuthBasic, AuthOAuth2ClientCredentials or AuthMTLS

	// basic
	Username, Password string

	// oauth2_client_credentials
	TokenURL, ClientID, ClientSecret, Audience string
	Scopes                                     []string

	// mtls: the client certificate chain and its key; CACertificatePEM is
	// trusted for the receiver's certificate besides the usual roots.
	CertificatePEM, PrivateKeyPEM, CACertificatePEM []byte
}

// FieldError rejects an Auth, naming the field ("auth.token_url") and the
// rule, so the API can answer 400 with it. It never quotes secret material.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// ValidateAuth checks a without any I/O: required fields per type, the
// token URL against the create-time policy (CheckURL), and that the PEM
// material parses and the key matches the certificate.
func ValidateAuth(opts Options, a Auth) error {
	switch a.Type {
	case AuthNone:
		return nil
	case AuthBasic:
		if a.Username == "" {
			return &FieldError{Field: "auth.username", Reason: "is required"}
		}
		// RFC 7617: the user-id cannot contain a colon, the separator.
		if strings.ContainsAny(a.Username, ":\r\n\x00") {
			return &FieldError{Field: "auth.username", Reason: "must not contain ':', CR, LF or NUL"}
		}
		return nil
	case AuthOAuth2ClientCredentials:
		if err := CheckURL(a.TokenURL, opts); err != nil {
			return &FieldError{Field: "auth.token_url", Reason: err.Error()}
		}
		if a.ClientID == "" {
			return &FieldError{Field: "auth.client_id", Reason: "is required"}
		}
		if a.ClientSecret == "" {
			return &FieldError{Field: "auth.client_secret", Reason: "is required"}
		}
		for i, s := range a.Scopes {
			// Scopes travel space-separated (RFC 6749 §3.3).
			if s == "" || strings.ContainsAny(s, " \"\\\t\r\n\x00") {
				return &FieldError{Field: fmt.Sprintf("auth.scopes[%d]", i), Reason: "must be a non-empty scope token without spaces or quotes"}
			}
		}
		return nil
	case AuthMTLS:
		_, err := clientCertificate(a)
		if err != nil {
			return err
		}
		if len(a.CACertificatePEM) > 0 {
			if err := appendCA(x509.NewCertPool(), a.CACertificatePEM); err != nil {
				return err
			}
		}
		return nil
	default:
		return &FieldError{Field: "auth.type", Reason: "must be basic, oauth2_client_credentials or mtls"}
	}
}

// NewAuthClient returns a guarded client (the policy of NewClient: dial-time
// address checks, no proxy, no redirects, no transparent decompression) that
// authenticates every request with auth. Build it once per endpoint version
// and share it: an OAuth2 client caches its token.
func NewAuthClient(opts Options, auth Auth) (*http.Client, error) {
	if err := ValidateAuth(opts, auth); err != nil {
		return nil, err
	}
	client := NewClient(opts)
	base := client.Transport.(*http.Transport)
	switch auth.Type {
	case AuthBasic:
		client.Transport = &basicTransport{base: base, username: auth.Username, password: auth.Password}
	case AuthOAuth2ClientCredentials:
		client.Transport = newOAuth2Transport(base, auth)
	case AuthMTLS:
		t, err := mtlsTransport(base, opts, auth)
		if err != nil {
			return nil, err
		}
		client.Transport = t
	}
	return client, nil
}

// basicTransport sets HTTP basic credentials on every request.
type basicTransport struct {
	base               *http.Transport
	username, password string
}

func (t *basicTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	// A RoundTripper must not modify the caller's request.
	r = r.Clone(r.Context())
	r.SetBasicAuth(t.username, t.password)
	return t.base.RoundTrip(r)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the pool.
func (t *basicTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// mtlsTransport is base presenting the client certificate, trusting
// CACertificatePEM besides the roots base already trusts.
func mtlsTransport(base *http.Transport, opts Options, a Auth) (*http.Transport, error) {
	cert, err := clientCertificate(a)
	if err != nil {
		return nil, err
	}
	cfg := base.TLSClientConfig
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg = cfg.Clone()
	cfg.Certificates = []tls.Certificate{cert}
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	if len(a.CACertificatePEM) > 0 {
		var pool *x509.CertPool
		if opts.TLSClientConfig != nil && opts.TLSClientConfig.RootCAs != nil {
			pool = opts.TLSClientConfig.RootCAs.Clone()
		} else if pool, err = x509.SystemCertPool(); err != nil {
			return nil, fmt.Errorf("load system roots: %w", err)
		}
		if err := appendCA(pool, a.CACertificatePEM); err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	base.TLSClientConfig = cfg
	return base, nil
}

// clientCertificate parses the mTLS pair, naming the field at fault.
func clientCertificate(a Auth) (tls.Certificate, error) {
	if len(a.CertificatePEM) == 0 {
		return tls.Certificate{}, &FieldError{Field: "auth.certificate", Reason: "is required"}
	}
	if _, err := parseCertificates(a.CertificatePEM); err != nil {
		return tls.Certificate{}, &FieldError{Field: "auth.certificate", Reason: err.Error()}
	}
	if len(a.PrivateKeyPEM) == 0 {
		return tls.Certificate{}, &FieldError{Field: "auth.private_key", Reason: "is required"}
	}
	if b, _ := pem.Decode(a.PrivateKeyPEM); b == nil || !strings.HasSuffix(b.Type, "PRIVATE KEY") {
		return tls.Certificate{}, &FieldError{Field: "auth.private_key", Reason: "must be a PEM private key"}
	}
	// The certificate parsed, so X509KeyPair can only fail on the key. Its
	// message is not quoted: keep key details out of answers and logs.
	cert, err := tls.X509KeyPair(a.CertificatePEM, a.PrivateKeyPEM)
	if err != nil {
		return tls.Certificate{}, &FieldError{Field: "auth.private_key", Reason: "must be a supported private key (PKCS #1, PKCS #8 or EC) matching auth.certificate"}
	}
	return cert, nil
}

// appendCA adds the PEM certificates of ca to pool.
func appendCA(pool *x509.CertPool, ca []byte) error {
	certs, err := parseCertificates(ca)
	if err != nil {
		return &FieldError{Field: "auth.ca_certificate", Reason: err.Error()}
	}
	for _, c := range certs {
		pool.AddCert(c)
	}
	return nil
}

// parseCertificates parses every PEM block of b, which must all be
// certificates, at least one.
func parseCertificates(b []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("must contain only PEM certificates (found %q)", block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("invalid certificate: %w", err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("must be a PEM certificate")
	}
	if len(strings.TrimSpace(string(b))) > 0 {
		return nil, errors.New("trailing data after the PEM certificates")
	}
	return certs, nil
}
