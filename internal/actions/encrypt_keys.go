package actions

import (
	"crypto/ecdh"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Bounds on a receiver's public JWK beyond what parses. A key that parses
// but cannot encrypt would be accepted at create and fail every delivery,
// so these are checked when the key is given.
const (
	// MaxKidLength bounds "kid": it travels in every JWE header.
	MaxKidLength = 256
	// maxRSAExponent is the largest public exponent crypto/rsa accepts.
	maxRSAExponent = 1<<31 - 1
)

// checkKid refuses a kid a receiver could not have meant: longer than
// MaxKidLength characters or not UTF-8.
func checkKid(kid string) error {
	if !utf8.ValidString(kid) || utf8.RuneCountInString(kid) > MaxKidLength {
		return fmt.Errorf(`"kid" must be at most %d characters`, MaxKidLength)
	}
	return nil
}

// checkX25519 refuses a small-order point (all zeros, 1, and the others of
// Curve25519's eight-torsion, in canonical or non-canonical encoding): the
// shared secret with any private key is then all zeros, which crypto/ecdh
// reports as an error, so every seal would fail — and were it not refused,
// the content key would be known to anyone. Agreeing once with a throwaway
// key catches every such point without a list to keep.
func checkX25519(pub *ecdh.PublicKey) error {
	probe, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("check X25519 key: %w", err)
	}
	if _, err := probe.ECDH(pub); err != nil {
		return errors.New(`"x" is a small-order X25519 point: no key can be agreed with it`)
	}
	return nil
}

// checkRSA refuses a modulus that cannot be a product of two large primes
// (even, or under 2048 bits; go-jose refuses more than 4096) and an
// exponent RSA-OAEP cannot use (even, below 3 or above 2^31-1; 65537 is the
// usual one).
func checkRSA(pub *rsa.PublicKey) error {
	if pub.N.BitLen() < minRSABits {
		return fmt.Errorf(`RSA keys must have at least %d bits ("n")`, minRSABits)
	}
	if pub.N.Bit(0) == 0 {
		return errors.New(`"n" is even: not an RSA modulus`)
	}
	if pub.E < 3 || pub.E > maxRSAExponent || pub.E%2 == 0 {
		return errors.New(`"e" must be an odd exponent from 3 to 2^31-1 (65537 is usual)`)
	}
	return nil
}
