package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

// TestConsoleChecksCatchWhatTheyPromise: the checks every story runs do
// fail a page with an inline script under a strict CSP, an unlabelled
// input, a nameless button and an image without alt, and pass a clean one.
func TestConsoleChecksCatchWhatTheyPromise(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; img-src data:")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		head := `<!doctype html><html lang="en"><head><title>t</title></head><body><header>q</header><main><h1>t</h1>`
		switch r.URL.Path {
		case "/bad":
			_, _ = w.Write([]byte(head + `<script>document.title = "x";</script><input name="free"><button></button>` +
				`<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">` + `</main></body></html>`))
		default:
			_, _ = w.Write([]byte(head + `<label for="n">Name</label><input id="n" name="n"><button>Go</button>` +
				`<img alt="" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></main></body></html>`))
		}
	}))
	t.Cleanup(srv.Close)
	p := &page{t: t, ctx: browser(t), base: srv.URL}

	p.run(pageTimeout, "open the clean page", chromedp.Navigate(srv.URL+"/good"), chromedp.WaitReady("body", chromedp.ByQuery))
	_, problems, ok := p.problems()
	require.True(t, ok)
	require.Empty(t, problems)

	p.run(pageTimeout, "open the bad page", chromedp.Navigate(srv.URL+"/bad"), chromedp.WaitReady("body", chromedp.ByQuery))
	var all []string
	// The browser reports the violation asynchronously: collect until it
	// is seen.
	seen := qhronostest.Eventually(pageTimeout, nil, func() bool {
		_, got, _ := p.problems()
		all = append(all, got...)
		joined := strings.Join(all, "\n")
		return strings.Contains(joined, "CSP violation") && strings.Contains(joined, "without an accessible label")
	})
	require.True(t, seen, "problems found: %v", all)
	joined := strings.Join(all, "\n")
	require.Contains(t, joined, "form control without an accessible label: input[name=free]")
	require.Contains(t, joined, "button without a name")
	require.Contains(t, joined, "image without alt")
}
