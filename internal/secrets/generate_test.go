package secrets

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGenerateSecret(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 16 {
		s, err := GenerateSecret()
		require.NoError(t, err)
		rest, ok := strings.CutPrefix(s, "whsec_")
		if !ok {
			t.Fatalf("secret %q lacks the whsec_ prefix", s)
		}
		key, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			t.Fatalf("secret body is not standard base64: %v", err)
		}
		if got, want := len(key), 32; got != want {
			t.Errorf("decoded key length = %d, want %d", got, want)
		}
		if seen[s] {
			t.Errorf("secret %q generated twice", s)
		}
		seen[s] = true
	}
}
