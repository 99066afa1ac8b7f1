package actions

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/go-jose/go-jose/v4"
	josecipher "github.com/go-jose/go-jose/v4/cipher"
)

// ContentTypeJOSE is the Content-Type of an encrypted delivery: its body is
// a JWE in compact serialization (RFC 7516 §9).
const ContentTypeJOSE = "application/jose"

// Key management algorithms a receiver's key may name; the content is
// always encrypted with A256GCM.
const (
	algRSAOAEP256 = "RSA-OAEP-256"
	algECDHES     = "ECDH-ES"
	encA256GCM    = "A256GCM"
)

// minRSABits refuses keys too short to protect anything.
const minRSABits = 2048

// Encryption seals delivery bodies to a receiver's public key
// (action.params.encryption_jwk): RSA-OAEP-256 for an RSA key, ECDH-ES for
// a P-256 or X25519 key, the content in A256GCM, as a compact JWE. The key's
// kid, when it has one, goes into the JWE header so a receiver holding
// several private keys (a rotation) picks the right one.
//
// Rotation needs no grace period on the sending side: a public key is not a
// secret and each attempt is sealed when it is sent, so the receiver adds its
// new key pair, the event is updated to the new public key, and the receiver
// keeps the old private key until what was sealed to it has been consumed.
// A compact JWE has exactly one recipient, which is what makes the body an
// opaque string any JOSE library opens.
type Encryption struct {
	kid    string
	rsa    *rsa.PublicKey
	ec     *ecdsa.PublicKey
	x25519 *ecdh.PublicKey
}

// jwkFields are the members ParseEncryptionJWK reads itself (go-jose does
// not know X25519 keys).
type jwkFields struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	D   string `json:"d"`
	Alg string `json:"alg"`
	Use string `json:"use"`
	Kid string `json:"kid"`
}

// ParseEncryptionJWK checks a receiver's public JWK: an RSA key of 2048 to
// 4096 bits, an EC P-256 key or an OKP X25519 key (not a small-order
// point), public only, with a kid of at most 256 characters, "alg"
// (when given) the one its type uses and "use" (when given) "enc". Errors
// explain the rule without quoting the key.
func ParseEncryptionJWK(raw json.RawMessage) (*Encryption, error) {
	var f jwkFields
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, errors.New("must be a JWK (a JSON object with kty)")
	}
	if f.Use != "" && f.Use != "enc" {
		return nil, fmt.Errorf(`"use" must be "enc", not %q`, f.Use)
	}
	if f.D != "" {
		return nil, errors.New("must be a public key: it holds private members (keep the private key with the receiver)")
	}
	if err := checkKid(f.Kid); err != nil {
		return nil, err
	}
	e := &Encryption{kid: f.Kid}
	switch f.Kty {
	case "OKP":
		if f.Crv != "X25519" {
			return nil, fmt.Errorf("OKP keys must be on curve X25519, not %q", f.Crv)
		}
		if f.Alg != "" && f.Alg != algECDHES {
			return nil, fmt.Errorf(`"alg" must be %q for an X25519 key`, algECDHES)
		}
		x, err := base64.RawURLEncoding.DecodeString(f.X)
		if err != nil || len(x) != 32 {
			return nil, errors.New(`"x" must be the base64url of a 32-byte X25519 public key`)
		}
		if e.x25519, err = ecdh.X25519().NewPublicKey(x); err != nil {
			return nil, errors.New(`"x" is not a valid X25519 public key`)
		}
		if err := checkX25519(e.x25519); err != nil {
			return nil, err
		}
		return e, nil
	case "RSA", "EC":
	case "":
		return nil, errors.New(`"kty" is required (RSA, EC or OKP)`)
	default:
		return nil, fmt.Errorf(`"kty" must be RSA, EC or OKP, not %q`, f.Kty)
	}
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("not a valid %s JWK: %s", f.Kty, trimJoseError(err))
	}
	if !k.IsPublic() || !k.Valid() {
		return nil, errors.New("must be a valid public key")
	}
	switch pub := k.Key.(type) {
	case *rsa.PublicKey:
		if f.Alg != "" && f.Alg != algRSAOAEP256 {
			return nil, fmt.Errorf(`"alg" must be %q for an RSA key`, algRSAOAEP256)
		}
		if err := checkRSA(pub); err != nil {
			return nil, err
		}
		e.rsa = pub
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() {
			return nil, errors.New("EC keys must be on curve P-256")
		}
		if f.Alg != "" && f.Alg != algECDHES {
			return nil, fmt.Errorf(`"alg" must be %q for an EC key`, algECDHES)
		}
		e.ec = pub
	default:
		return nil, fmt.Errorf("unsupported %s key", f.Kty)
	}
	return e, nil
}

func trimJoseError(err error) string {
	const prefix = "go-jose/go-jose: "
	s := err.Error()
	if len(s) > len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):]
	}
	return s
}

// Seal returns plaintext as a compact JWE to the receiver's key.
func (e *Encryption) Seal(plaintext []byte) ([]byte, error) {
	if e.x25519 != nil {
		return sealX25519(e.x25519, e.kid, plaintext)
	}
	rcpt := jose.Recipient{KeyID: e.kid}
	if e.rsa != nil {
		rcpt.Algorithm, rcpt.Key = jose.RSA_OAEP_256, e.rsa
	} else {
		rcpt.Algorithm, rcpt.Key = jose.ECDH_ES, e.ec
	}
	enc, err := jose.NewEncrypter(jose.A256GCM, rcpt, (&jose.EncrypterOptions{}).WithContentType("application/json"))
	if err != nil {
		return nil, fmt.Errorf("encrypt payload: %w", err)
	}
	obj, err := enc.Encrypt(plaintext)
	if err != nil {
		return nil, fmt.Errorf("encrypt payload: %w", err)
	}
	s, err := obj.CompactSerialize()
	if err != nil {
		return nil, fmt.Errorf("encrypt payload: %w", err)
	}
	return []byte(s), nil
}

// sealX25519 is ECDH-ES direct key agreement over X25519 (RFC 8037 §3.2,
// RFC 7518 §4.6) with A256GCM content encryption, which go-jose does not
// implement: an ephemeral key pair, Concat KDF over the shared secret, and
// the protected header as the additional authenticated data.
func sealX25519(pub *ecdh.PublicKey, kid string, plaintext []byte) ([]byte, error) {
	eph, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("encrypt payload: %w", err)
	}
	z, err := eph.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("encrypt payload: %w", err)
	}
	header := map[string]any{"alg": algECDHES, "enc": encA256GCM, "cty": "application/json",
		"epk": map[string]string{"kty": "OKP", "crv": "X25519", "x": base64.RawURLEncoding.EncodeToString(eph.PublicKey().Bytes())}}
	if kid != "" {
		header["kid"] = kid
	}
	hj, err := json.Marshal(header)
	if err != nil {
		return nil, fmt.Errorf("encrypt payload: %w", err)
	}
	protected := base64.RawURLEncoding.EncodeToString(hj)
	cek := concatKDF(z, encA256GCM, 32)
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, fmt.Errorf("encrypt payload: %w", err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("encrypt payload: %w", err)
	}
	iv := make([]byte, gcm.NonceSize())
	if _, err := io.ReadFull(rand.Reader, iv); err != nil {
		return nil, fmt.Errorf("encrypt payload: %w", err)
	}
	sealed := gcm.Seal(nil, iv, plaintext, []byte(protected))
	ct, tag := sealed[:len(sealed)-gcm.Overhead()], sealed[len(sealed)-gcm.Overhead():]
	b64 := base64.RawURLEncoding.EncodeToString
	return []byte(protected + ".." + b64(iv) + "." + b64(ct) + "." + b64(tag)), nil
}

// concatKDF derives size bytes for algorithm alg from the shared secret z
// with empty PartyUInfo and PartyVInfo (RFC 7518 §4.6.2).
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
