package secrets

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const testKey = "0123456789abcdef0123456789abcdef-test-key"

func TestNewBoxRejectsShortKey(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", "short", strings.Repeat("k", MinKeyBytes-1)} {
		if _, err := NewBox(key); err == nil {
			t.Errorf("NewBox(%d bytes) = nil error, want an error", len(key))
		}
	}
	_, err := NewBox(strings.Repeat("k", MinKeyBytes))
	require.NoError(t, err)
}

func TestBoxRoundTrip(t *testing.T) {
	t.Parallel()
	box, err := NewBox(testKey)
	require.NoError(t, err)
	for _, pt := range [][]byte{{}, []byte("s"), []byte("whsec_c2VjcmV0"), bytes.Repeat([]byte{0xff}, 4096)} {
		ct, err := box.Seal(pt)
		require.NoError(t, err)
		// A plaintext of 8 bytes or more turns up in random ciphertext with
		// probability below len(ct)/2^64; a shorter one by chance often
		// (one byte: about one seal in ten), so it is checked where it would
		// sit unencrypted, across many seals: all matching by chance has
		// probability 2^-256 at most.
		switch {
		case len(pt) >= 8:
			if bytes.Contains(ct, pt) {
				t.Errorf("ciphertext contains the plaintext %q", pt)
			}
		case len(pt) > 0:
			if leaksInPlace(t, box, pt, 32) {
				t.Errorf("every one of 32 seals carries the plaintext %q at the payload's offset", pt)
			}
		}
		got, err := box.Open(ct)
		require.NoError(t, err)
		if !bytes.Equal(got, pt) {
			t.Errorf("Open(Seal(%q)) = %q, want %q", pt, got, pt)
		}
	}
}

// leaksInPlace seals pt n times and reports whether each ciphertext shows
// it verbatim right after the version byte and the nonce.
func leaksInPlace(t *testing.T, box *Box, pt []byte, n int) bool {
	t.Helper()
	const header = 1 + 12 // version, GCM nonce
	for range n {
		ct, err := box.Seal(pt)
		require.NoError(t, err)
		if !bytes.Equal(ct[header:header+len(pt)], pt) {
			return false
		}
	}
	return true
}

func TestBoxSealIsRandomized(t *testing.T) {
	t.Parallel()
	box, err := NewBox(testKey)
	require.NoError(t, err)
	a, err := box.Seal([]byte("same"))
	require.NoError(t, err)
	b, err := box.Seal([]byte("same"))
	require.NoError(t, err)
	if bytes.Equal(a, b) {
		t.Errorf("two seals of the same plaintext are identical; the nonce is not random")
	}
	if a[0] != version1 {
		t.Errorf("first byte = %d, want version %d", a[0], version1)
	}
}

func TestBoxDetectsTampering(t *testing.T) {
	t.Parallel()
	box, err := NewBox(testKey)
	require.NoError(t, err)
	ct, err := box.Seal([]byte("per-event hmac secret"))
	require.NoError(t, err)
	for i := 1; i < len(ct); i++ {
		bad := bytes.Clone(ct)
		bad[i] ^= 0x01
		if _, err := box.Open(bad); !errors.Is(err, ErrInvalidCiphertext) {
			t.Errorf("Open with byte %d flipped: err = %v, want ErrInvalidCiphertext", i, err)
		}
	}
	for _, n := range []int{0, 1, 12, 13, len(ct) - 1} {
		if _, err := box.Open(ct[:n]); !errors.Is(err, ErrInvalidCiphertext) {
			t.Errorf("Open of the first %d bytes: err = %v, want ErrInvalidCiphertext", n, err)
		}
	}
	bad := bytes.Clone(ct)
	bad[0] = 2
	if _, err := box.Open(bad); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("Open with version 2: err = %v, want ErrUnsupportedVersion", err)
	}
}

func TestBoxWrongKey(t *testing.T) {
	t.Parallel()
	box, err := NewBox(testKey)
	require.NoError(t, err)
	other, err := NewBox(testKey + "-other")
	require.NoError(t, err)
	ct, err := box.Seal([]byte("secret"))
	require.NoError(t, err)
	if got, err := other.Open(ct); !errors.Is(err, ErrInvalidCiphertext) {
		t.Errorf("Open under another key = %q, %v; want ErrInvalidCiphertext", got, err)
	}
	// The same configured key on another instance opens it.
	same, err := NewBox(testKey)
	require.NoError(t, err)
	got, err := same.Open(ct)
	require.NoError(t, err)
	if string(got) != "secret" {
		t.Errorf("Open on a second box with the same key = %q, want %q", got, "secret")
	}
}
