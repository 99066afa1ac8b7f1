package secrets

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The secrets that sign a delivery before, during and after a rotation's
// grace, for an event with its own secret and one signing with the default.
func TestSigningSecretsThroughARotation(t *testing.T) {
	t.Parallel()
	box, err := NewBox(testKey)
	require.NoError(t, err)
	seal := func(s string) []byte {
		ct, err := box.Seal([]byte(s))
		require.NoError(t, err)
		return ct
	}
	t0 := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	grace := time.Hour
	own := Sealed{Current: seal("own-secret")}
	byDefault := Sealed{}
	tests := []struct {
		name          string
		stored        Sealed
		defaultSecret string
		at            time.Time
		want          []string
	}{
		{"own secret", own, "default", t0, []string{"own-secret"}},
		{"default secret", byDefault, "default", t0, []string{"default"}},
		{"own secret rotated: both during the grace", own.Rotate(seal("new"), t0, grace), "default", t0.Add(grace - time.Second), []string{"new", "own-secret"}},
		{"own secret rotated: new only after the grace", own.Rotate(seal("new"), t0, grace), "default", t0.Add(grace), []string{"new"}},
		{"default rotated: the default signs during the grace", byDefault.Rotate(seal("new"), t0, grace), "default", t0.Add(grace - time.Second), []string{"new", "default"}},
		{"default rotated: a changed default is honoured", byDefault.Rotate(seal("new"), t0, grace), "changed-default", t0, []string{"new", "changed-default"}},
		{"default rotated: new only after the grace", byDefault.Rotate(seal("new"), t0, grace), "default", t0.Add(grace), []string{"new"}},
		{"rotated without grace", own.Rotate(seal("new"), t0, 0), "default", t0, []string{"new"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := box.SigningSecrets(tc.stored, tc.defaultSecret, tc.at)
			require.NoError(t, err)
			if !slices.Equal(got, tc.want) {
				t.Errorf("SigningSecrets = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSigningSecretsCorruptPrevious(t *testing.T) {
	t.Parallel()
	box, err := NewBox(testKey)
	require.NoError(t, err)
	cur, err := box.Seal([]byte("new"))
	require.NoError(t, err)
	until := time.Now().Add(time.Hour)
	_, err = box.SigningSecrets(Sealed{Current: cur, Previous: []byte{1, 2, 3}, PreviousUntil: &until}, "d", time.Now())
	if !errors.Is(err, ErrInvalidCiphertext) {
		t.Fatalf("SigningSecrets = %v, want ErrInvalidCiphertext", err)
	}
}
