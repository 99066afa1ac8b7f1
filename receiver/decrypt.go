package receiver

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/go-jose/go-jose/v4"
	josecipher "github.com/go-jose/go-jose/v4/cipher"
)

// ContentTypeJOSE is the Content-Type of a delivery whose body Qhronos
// encrypted to the receiver's public key (action.params.encryption_jwk): a
// compact JWE, RSA-OAEP-256 or ECDH-ES (P-256, X25519) with A256GCM.
const ContentTypeJOSE = "application/jose"

// ErrDecrypt reports a body that none of the private keys opens (or no key
// was given for an encrypted delivery). It is a receiver's configuration
// problem, not a forgery: the signature was verified first.
var ErrDecrypt = errors.New("payload decryption failed")

// PrivateKey is a receiver's private key for encrypted deliveries.
type PrivateKey struct {
	kid string
	key any // *rsa.PrivateKey, *ecdsa.PrivateKey or *ecdh.PrivateKey (X25519)
}

// ParsePrivateKey reads a private key from a PEM block (PKCS #8, PKCS #1 or
// SEC 1) or a private JWK (RSA, EC P-256, OKP X25519; its kid, when set,
// picks it among several during a key rotation).
func ParsePrivateKey(data []byte) (PrivateKey, error) {
	trimmed := strings.TrimSpace(string(data))
	if strings.HasPrefix(trimmed, "{") {
		return parsePrivateJWK([]byte(trimmed))
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return PrivateKey{}, errors.New("private key: neither PEM nor a JWK")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		switch k := k.(type) {
		case *rsa.PrivateKey, *ecdsa.PrivateKey:
			return PrivateKey{key: k}, nil
		case *ecdh.PrivateKey:
			if k.Curve() == ecdh.X25519() {
				return PrivateKey{key: k}, nil
			}
		}
		return PrivateKey{}, fmt.Errorf("private key: %T is not an RSA, P-256 or X25519 key", k)
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return PrivateKey{key: k}, nil
	}
	if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return PrivateKey{key: k}, nil
	}
	return PrivateKey{}, errors.New("private key: unsupported PEM block (want PKCS #8, PKCS #1 or SEC 1)")
}

func parsePrivateJWK(raw []byte) (PrivateKey, error) {
	var f struct {
		Kty, Crv, X, D, Kid string
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return PrivateKey{}, fmt.Errorf("private key: invalid JWK: %w", err)
	}
	if f.Kty == "OKP" {
		if f.Crv != "X25519" {
			return PrivateKey{}, fmt.Errorf("private key: OKP curve %q is not X25519", f.Crv)
		}
		d, err := base64.RawURLEncoding.DecodeString(f.D)
		if err != nil || len(d) != 32 {
			return PrivateKey{}, errors.New(`private key: "d" must be the base64url of 32 bytes`)
		}
		k, err := ecdh.X25519().NewPrivateKey(d)
		if err != nil {
			return PrivateKey{}, fmt.Errorf("private key: %w", err)
		}
		return PrivateKey{kid: f.Kid, key: k}, nil
	}
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON(raw); err != nil {
		return PrivateKey{}, fmt.Errorf("private key: %w", err)
	}
	if k.IsPublic() {
		return PrivateKey{}, errors.New("private key: the JWK is a public key")
	}
	switch k.Key.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey:
		return PrivateKey{kid: k.KeyID, key: k.Key}, nil
	}
	return PrivateKey{}, fmt.Errorf("private key: %T is not an RSA or EC key", k.Key)
}

// WithDecryptionKeys makes the Verifier open encrypted deliveries: Open and
// the Middleware decrypt a body whose Content-Type is application/jose
// after verifying its signature. Give both private keys during a rotation;
// the JWE's kid picks one, and without a kid each is tried.
func WithDecryptionKeys(keys ...PrivateKey) Option {
	return func(v *Verifier) { v.privateKeys = append(v.privateKeys, keys...) }
}

// IsEncrypted reports whether a delivery's Content-Type is a JWE's.
func IsEncrypted(header http.Header) bool {
	mt, _, err := mime.ParseMediaType(header.Get("Content-Type"))
	return err == nil && mt == ContentTypeJOSE
}

// Open verifies a delivery and returns its payload: the body itself, or
// the decrypted body of an encrypted one.
func (v *Verifier) Open(header http.Header, body []byte) ([]byte, error) {
	if err := v.Verify(header, body); err != nil {
		return nil, err
	}
	if !IsEncrypted(header) {
		return body, nil
	}
	return Decrypt(body, v.privateKeys...)
}

// OpenMessage is Open for a broker message's headers.
func (v *Verifier) OpenMessage(headers map[string]string, body []byte) ([]byte, error) {
	return v.Open(MessageHeader(headers), body)
}

// Decrypt opens a compact JWE with the first of keys that fits (the one
// named by its kid first). Errors wrap ErrDecrypt.
func Decrypt(jwe []byte, keys ...PrivateKey) ([]byte, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: the delivery is encrypted and no private key was given", ErrDecrypt)
	}
	parts := strings.Split(strings.TrimSpace(string(jwe)), ".")
	if len(parts) != 5 {
		return nil, fmt.Errorf("%w: not a compact JWE", ErrDecrypt)
	}
	hj, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return nil, fmt.Errorf("%w: invalid protected header", ErrDecrypt)
	}
	var h struct {
		Alg, Enc, Kid string
		Epk           *struct{ Kty, Crv, X string }
	}
	if err := json.Unmarshal(hj, &h); err != nil {
		return nil, fmt.Errorf("%w: invalid protected header", ErrDecrypt)
	}
	ordered := make([]PrivateKey, 0, len(keys))
	for _, k := range keys {
		if h.Kid != "" && k.kid == h.Kid {
			ordered = append([]PrivateKey{k}, ordered...)
		} else {
			ordered = append(ordered, k)
		}
	}
	if h.Alg == "ECDH-ES" && h.Epk != nil && h.Epk.Kty == "OKP" {
		return openX25519(parts, h.Enc, h.Epk.Crv, h.Epk.X, ordered)
	}
	obj, err := jose.ParseEncryptedCompact(string(jwe), []jose.KeyAlgorithm{jose.RSA_OAEP_256, jose.ECDH_ES},
		[]jose.ContentEncryption{jose.A256GCM})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDecrypt, err)
	}
	for _, k := range ordered {
		if _, ok := k.key.(*ecdh.PrivateKey); ok {
			continue
		}
		if plain, err := obj.Decrypt(k.key); err == nil {
			return plain, nil
		}
	}
	return nil, fmt.Errorf("%w: none of the %d private key(s) opens it (alg %s, kid %q)", ErrDecrypt, len(keys), h.Alg, h.Kid)
}

// openX25519 is ECDH-ES over X25519 with A256GCM (RFC 8037), which go-jose
// does not implement.
func openX25519(parts []string, enc, crv, x string, keys []PrivateKey) ([]byte, error) {
	if enc != "A256GCM" || crv != "X25519" || parts[1] != "" {
		return nil, fmt.Errorf("%w: unsupported JWE (want ECDH-ES over X25519 with A256GCM)", ErrDecrypt)
	}
	epkBytes, err := base64.RawURLEncoding.DecodeString(x)
	if err != nil {
		return nil, fmt.Errorf("%w: invalid epk", ErrDecrypt)
	}
	epk, err := ecdh.X25519().NewPublicKey(epkBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: invalid epk", ErrDecrypt)
	}
	iv, err1 := base64.RawURLEncoding.DecodeString(parts[2])
	ct, err2 := base64.RawURLEncoding.DecodeString(parts[3])
	tag, err3 := base64.RawURLEncoding.DecodeString(parts[4])
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, fmt.Errorf("%w: invalid JWE encoding", ErrDecrypt)
	}
	for _, k := range keys {
		priv, ok := k.key.(*ecdh.PrivateKey)
		if !ok {
			continue
		}
		z, err := priv.ECDH(epk)
		if err != nil {
			continue
		}
		block, err := aes.NewCipher(concatKDF(z, enc, 32))
		if err != nil {
			continue
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil || len(iv) != gcm.NonceSize() {
			continue
		}
		if plain, err := gcm.Open(nil, iv, append(append([]byte{}, ct...), tag...), []byte(parts[0])); err == nil {
			return plain, nil
		}
	}
	return nil, fmt.Errorf("%w: none of the %d private key(s) opens it (alg ECDH-ES, X25519)", ErrDecrypt, len(keys))
}

func concatKDF(z []byte, alg string, size int) []byte {
	prefixed := func(b []byte) []byte {
		out := make([]byte, 4+len(b))
		binary.BigEndian.PutUint32(out, uint32(len(b)))
		copy(out[4:], b)
		return out
	}
	supPub := make([]byte, 4)
	binary.BigEndian.PutUint32(supPub, uint32(size*8))
	r := josecipher.NewConcatKDF(crypto.SHA256, z, prefixed([]byte(alg)), prefixed(nil), prefixed(nil), supPub, nil)
	out := make([]byte, size)
	_, _ = io.ReadFull(r, out)
	return out
}
