package redact_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/redact"
)

func TestURLErrorKeepsTheHostOnly(t *testing.T) {
	t.Parallel()
	bad := "https://u:pw@hooks.example.com:8443/p" + "%zz?sig=abc"
	_, parseErr := url.Parse(strings.Clone(bad)) // not a constant: staticcheck would flag the bad literal
	req, err := http.NewRequestWithContext(context.Background(), "GET", "http://127.0.0.1:1/path?token=abc", nil)
	require.NoError(t, err)
	_, doErr := http.DefaultClient.Do(req)
	for _, tc := range []struct {
		err  error
		host string
	}{
		{parseErr, "(url withheld)"},
		{doErr, "127.0.0.1:1"},
		{fmt.Errorf("wrapped: %w", &url.Error{Op: "Post", URL: "https://u:pw@h.example/a/b?code=abc", Err: errors.New("boom")}), "h.example"},
	} {
		got := redact.URLError(tc.err)
		require.Contains(t, got.Error(), tc.host)
		for _, s := range []string{"pw", "abc", "/p", "path", "/a/b"} {
			require.False(t, strings.Contains(got.Error(), s), "%q leaks %q", got, s)
		}
		var ue *url.Error
		require.ErrorAs(t, got, &ue, "still a *url.Error")
	}
	require.NoError(t, redact.URLError(nil))
	plain := errors.New("plain")
	require.Equal(t, plain, redact.URLError(plain))
}
