// Package outboundtest gives tests a private PKI: a certificate authority
// generated for one test, and server and client certificates it signs.
package outboundtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// PKI is a certificate authority generated for one test. Its methods may be
// called from parallel subtests.
type PKI struct {
	// CAPEM is the CA certificate in PEM.
	CAPEM []byte
	cert  *x509.Certificate
	key   *ecdsa.PrivateKey
}

// NewPKI generates a CA named name, valid for an hour either side of now.
func NewPKI(t testing.TB, name string) *PKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &PKI{CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert: cert, key: key}
}

// Pool is a certificate pool trusting only the CA.
func (p *PKI) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.cert)
	return pool
}

// Issue signs a leaf certificate named commonName and returns it and its
// key in PEM. A server certificate is for commonName as an IP address or a
// DNS name (ExtKeyUsageServerAuth); a client certificate has
// ExtKeyUsageClientAuth.
func (p *PKI) Issue(t testing.TB, commonName string, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: serial.Add(serial, big.NewInt(2)), // 1 is the CA's
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		if ip := net.ParseIP(commonName); ip != nil {
			tmpl.IPAddresses = []net.IP{ip}
		} else {
			tmpl.DNSNames = []string{commonName}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.cert, &key.PublicKey, p.key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// ServerTLS is a TLS config for a loopback server (an httptest.Server's TLS
// field, say): it presents a certificate of p for 127.0.0.1 and asks for
// client certificates as clientAuth says, trusting only p for them.
func (p *PKI) ServerTLS(t testing.TB, clientAuth tls.ClientAuthType) *tls.Config {
	t.Helper()
	certPEM, keyPEM := p.Issue(t, "127.0.0.1", true)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: clientAuth, MinVersion: tls.VersionTLS12}
	if clientAuth != tls.NoClientCert {
		cfg.ClientCAs = p.Pool()
	}
	return cfg
}
