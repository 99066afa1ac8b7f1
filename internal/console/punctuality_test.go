package console

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The Punctuality form becomes the API's parameters: a preset window is
// counted back from now (From and To left out), a custom one is sent as
// typed, a link naming only from/to is a custom window, and what cannot be
// asked is named under its control.
func TestPunctualityFormParams(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, query     string
		from, to, group string
		tags            []string
		errs            []string
	}{
		{name: "default: the last 7 days by event", query: "", from: "2026-11-22T10:30:00Z", group: "event"},
		{name: "preset ignores from and to", query: "range=24h&from=2026-01-01&to=2026-02-01&group_by=tag",
			from: "2026-11-28T10:30:00Z", group: "tag"},
		{name: "30 days", query: "range=30d", from: "2026-10-30T10:30:00Z", group: "event"},
		{name: "custom", query: "range=custom&from=14+days+ago&to=2026-11-28", from: "14 days ago", to: "2026-11-28",
			group: "event"},
		{name: "a link naming from only is custom", query: "from=2026-11-01&tag=billing", from: "2026-11-01",
			group: "event", tags: []string{"billing"}},
		{name: "custom without a start", query: "range=custom&to=2026-11-28", errs: []string{"from"}},
		{name: "unknown range", query: "range=forever", errs: []string{"range"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			require.NoError(t, err)
			f, errs := readPunctualityFilter(q)
			var got []string
			for field := range errs {
				got = append(got, field)
			}
			require.ElementsMatch(t, tc.errs, got, "errors: %v", errs)
			if len(tc.errs) > 0 {
				return
			}
			p := f.params(now)
			require.Equal(t, tc.from, *p.From, "from")
			if tc.to == "" {
				require.Nil(t, p.To, "to: the API's default, now")
			} else {
				require.Equal(t, tc.to, *p.To, "to")
			}
			require.Equal(t, tc.group, string(*p.GroupBy))
			require.Equal(t, "1s", *p.Tolerance, "the default tolerance")
			require.Equal(t, tc.tags, p.Tag)
		})
	}
}
