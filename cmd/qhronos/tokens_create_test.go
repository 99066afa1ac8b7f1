package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParseExpiry: --expires takes a lifetime (days too) or any instant
// the server's parser reads; "in 2 hours" and "30d" used to be refused.
func TestParseExpiry(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for text, want := range map[string]time.Duration{
		"720h": 720 * time.Hour, "30d": 30 * 24 * time.Hour, "in 2 hours": 2 * time.Hour, "in 90 minutes": 90 * time.Minute,
	} {
		got, err := parseExpiry(text, now)
		require.NoError(t, err, text)
		require.WithinDuration(t, now.Add(want), got, 2*time.Second, text)
	}
	got, err := parseExpiry("2030-12-31T00:00:00Z", now)
	require.NoError(t, err)
	require.Equal(t, time.Date(2030, 12, 31, 0, 0, 0, 0, time.UTC), got)
	for _, text := range []string{"whenever", "-1h", "0s"} {
		_, err := parseExpiry(text, now)
		require.Error(t, err, text)
	}
}
