package secrets

import (
	"bytes"
	"testing"
)

// FuzzOpen feeds arbitrary ciphertexts (as a corrupted database column
// would): Open never panics and only accepts what Seal produced.
func FuzzOpen(f *testing.F) {
	box, err := NewBox(testKey)
	if err != nil {
		f.Fatal(err)
	}
	sealed, err := box.Seal([]byte("whsec_seed"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sealed)
	f.Fuzz(func(t *testing.T, ct []byte) {
		pt, err := box.Open(ct)
		// Fuzz workers seal their own seed with another nonce, so the
		// check is on content: the only plaintext ever sealed is the seed's.
		if err == nil && !bytes.Equal(pt, []byte("whsec_seed")) {
			t.Fatalf("Open accepted a ciphertext Seal never produced: %x → %q", ct, pt)
		}
	})
}
