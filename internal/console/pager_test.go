package console

import (
	"html"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// A list's next-page link carries the API's cursor and the list's filters
// as a query, not as one escaped blob ("cursor%3dabc"), which the console
// read as no cursor at all: page 1 again.
func TestNextPageLinksCarryTheCursor(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()
	page := body(t, tc.get(session, "/ui/events?tags=ops"))
	m := regexp.MustCompile(`<a href="(/ui/events\?[^"]*)" rel="next">`).FindStringSubmatch(page)
	require.NotNil(t, m, page)
	u, err := url.Parse(html.UnescapeString(m[1]))
	require.NoError(t, err)
	require.Equal(t, "abc", u.Query().Get("cursor"))
	require.Equal(t, "ops", u.Query().Get("tags"), "the filter goes with the cursor")
}
