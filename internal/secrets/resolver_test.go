package secrets

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
)

// An event rotated away from the default secret signs with its new secret
// and, until the grace ends by the resolver's clock, the default one.
func TestResolverSignsWithTheDefaultSecretDuringGrace(t *testing.T) {
	t.Parallel()
	box, err := NewBox(testKey)
	require.NoError(t, err)
	t0 := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	now := t0
	r := NewResolver(box, "default-secret", func() time.Time { return now })
	next, err := box.Seal([]byte("new-secret"))
	require.NoError(t, err)
	rotated := Sealed{}.Rotate(next, t0, time.Hour)
	ev := &model.Event{ID: "e1", HMACSecret: rotated.Current, PreviousSecret: rotated.Previous,
		PreviousSecretExpires: rotated.PreviousUntil}

	got, err := r.Resolve(ev)
	require.NoError(t, err)
	require.Equal(t, []string{"new-secret", "default-secret"}, got, "during the grace")
	now = t0.Add(time.Hour)
	got, err = r.Resolve(ev)
	require.NoError(t, err)
	require.Equal(t, []string{"new-secret"}, got, "after the grace")

	got, err = r.Resolve(&model.Event{ID: "e2"})
	require.NoError(t, err)
	require.Equal(t, []string{"default-secret"}, got, "an event without its own secret")

	_, err = r.Resolve(&model.Event{ID: "e3", HMACSecret: []byte("not sealed")})
	require.ErrorContains(t, err, "event e3")
}
