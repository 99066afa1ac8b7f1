package actions_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
)

// smallOrderX25519 are the encodings of Curve25519's small-order points
// (libsodium's blocklist): the identity-like 0 and 1, the two points of
// order 8, p-1, p and p+1, and each again with the ignored top bit set.
// Agreeing with any of them gives an all-zero secret.
var smallOrderX25519 = []string{
	"0000000000000000000000000000000000000000000000000000000000000000",
	"0100000000000000000000000000000000000000000000000000000000000000",
	"e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
	"5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"0000000000000000000000000000000000000000000000000000000000000080",
	"0100000000000000000000000000000000000000000000000000000000000080",
	"e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b880",
	"5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f11d7",
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
	"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
	"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
}

// rsaJWK is a public RSA JWK with the given modulus and exponent.
func rsaJWK(n *big.Int, e int) string {
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	return `{"kty":"RSA","n":"` + b64(n.Bytes()) + `","e":"` + b64(big.NewInt(int64(e)).Bytes()) + `"}`
}

// A key that parses but cannot encrypt used to be accepted, and every
// delivery to it then failed; each is refused when given, naming
// encryption_jwk and the member at fault, by every action that takes one.
func TestUnusableEncryptionKeysAreRefused(t *testing.T) {
	t.Parallel()
	n := testRSAKey(t).N
	even := new(big.Int).Add(n, big.NewInt(1)) // n is odd: n+1 is even, same size
	huge := new(big.Int).Lsh(big.NewInt(1), 4100)
	huge.Add(huge, big.NewInt(1))
	type badKey struct{ name, jwk, reason string }
	cases := []badKey{
		{"RSA even modulus", rsaJWK(even, 65537), `"n" is even`},
		{"RSA exponent 1", rsaJWK(n, 1), "bad e value"},
		{"RSA exponent 2^31+1", rsaJWK(n, 1<<31+1), `"e" must be an odd exponent`},
		{"RSA even exponent", rsaJWK(n, 65536), `"e" must be an odd exponent`},
		{"RSA modulus over 4096 bits", rsaJWK(huge, 65537), "RSA modulus size"},
		{"kid of 100 KB", `{"kty":"OKP","crv":"X25519","x":"hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo","kid":"` +
			strings.Repeat("k", 100<<10) + `"}`, `"kid" must be at most 256 characters`},
	}
	for _, h := range smallOrderX25519 {
		x, err := hex.DecodeString(h)
		require.NoError(t, err)
		cases = append(cases, badKey{"X25519 " + h[:8] + "…" + h[62:],
			`{"kty":"OKP","crv":"X25519","x":"` + base64.RawURLEncoding.EncodeToString(x) + `"}`, "small-order"})
	}
	for _, c := range cases {
		for _, a := range []struct {
			action actions.Action
			params string
		}{
			{actions.NewWebhook(testConfig(t, nil)), `{"url":"https://example.com","encryption_jwk":`},
			{actions.NewNATS(actions.BrokerConfig{Outbound: loopbackOutbound}), `{"url":"nats://127.0.0.1:4222","subject":"a","encryption_jwk":`},
		} {
			_, err := a.action.Prepare(json.RawMessage(a.params + c.jwk + `}`))
			var pe *actions.ParamError
			require.ErrorAs(t, err, &pe, "%s: %s", a.action.Type(), c.name)
			require.Equal(t, "encryption_jwk", pe.Param, c.name)
			require.Contains(t, pe.Reason, c.reason, c.name)
		}
	}

	// What a receiver really holds still passes: the usual exponent, a
	// kid at the limit.
	for _, jwk := range []string{
		rsaJWK(n, 65537), rsaJWK(n, 3),
		`{"kty":"OKP","crv":"X25519","x":"hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo","kid":"` + strings.Repeat("é", 256) + `"}`,
	} {
		_, err := actions.ParseEncryptionJWK(json.RawMessage(jwk))
		require.NoError(t, err, jwk[:40])
	}
}
