package console

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode"

	"go.uber.org/zap"
)

// view is what every page template receives.
type view struct {
	// Zone is the event's zone on a page about one event, where every time
	// is in it; empty elsewhere (times in the browser's zone).
	Zone     string
	Title    string
	Nav      string
	CSRF     string
	SignedIn bool
	Notice   string
	Error    string
	Data     any
	// Portal is set on the portal's pages: the header names its tags and
	// links back to the customer's application.
	Portal *portalScope
}

var funcs = template.FuncMap{
	"when":     when,
	"join":     strings.Join,
	"ms":       formatMS,
	"badge":    badgeClass,
	"deref":    deref,
	"add":      func(a, b int) int { return a + b },
	"truncate": truncate,
	"strs":     func(xs ...string) []string { return xs },
	// The event form's overlap policies and the event page's label.
	"overlapChoices": func() []overlapChoice { return overlapChoices },
	"overlapLabel":   overlapLabel,
}

// parsePages parses every page with the layout and the partials, its links
// under prefix. The templates write the console's paths (/ui/…); the
// portal's set (prefix /portal) is the same templates with those paths
// moved under /portal at parse time, so a page shared by both links within
// the one it is shown in. The static files stay where they are, under /ui.
func parsePages(prefix string) (map[string]*template.Template, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	partials, err := fs.Glob(templateFS, "templates/partials/*.html")
	if err != nil {
		return nil, err
	}
	move := strings.NewReplacer(Prefix+"/static/", Prefix+"/static/", Prefix+"/", prefix+"/")
	pages := map[string]*template.Template{}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" {
			continue
		}
		// As ParseFS would: in this order, each file into the template of
		// its base name (a partial named like the page goes into the page,
		// whose own text, parsed last, is its body).
		t := template.New(base).Funcs(funcs)
		files := append(append([]string{"templates/layout.html"}, partials...), n)
		for _, f := range files {
			src, err := fs.ReadFile(templateFS, f)
			if err != nil {
				return nil, err
			}
			into := t
			if path.Base(f) != base {
				into = t.New(path.Base(f))
			}
			if _, err := into.Parse(move.Replace(string(src))); err != nil {
				return nil, fmt.Errorf("parse %s: %w", f, err)
			}
		}
		pages[strings.TrimSuffix(base, ".html")] = t
	}
	return pages, nil
}

// isPortal reports whether r is a request for the portal's pages.
func isPortal(r *http.Request) bool {
	return r.URL.Path == PortalPrefix || strings.HasPrefix(r.URL.Path, PortalPrefix+"/")
}

// base is where r's pages are: /portal for the portal's, /ui for the
// console's. Handlers shared by both build their links and redirects on it.
func base(r *http.Request) string {
	if isPortal(r) {
		return PortalPrefix
	}
	return Prefix
}

// render writes a page; the template is executed into a buffer first so a
// template error never sends half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, s *session, name string, status int, v view) {
	pages := c.pages
	if isPortal(r) {
		pages = c.portalPages
	}
	t := pages[name]
	if t == nil {
		c.log.Error("no such console template", zap.String("template", name))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if s != nil {
		v.CSRF, v.SignedIn, v.Portal = s.CSRF, true, s.Portal
	}
	if v.Notice == "" {
		v.Notice = r.URL.Query().Get("notice")
		if len(v.Notice) > 200 {
			v.Notice = ""
		}
	}
	if v.Error == "" {
		// A refusal carried over a redirect (redirectProblem), shown as an
		// error rather than a notice.
		if p := r.URL.Query().Get("problem"); len(p) <= 300 {
			v.Error = p
		}
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		c.log.Error("render console page", zap.String("template", name), zap.Error(err))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderError shows a message page.
func (c *Console) renderError(w http.ResponseWriter, r *http.Request, s *session, status int, msg string) {
	c.render(w, r, s, "message", status, view{Title: http.StatusText(status), Error: msg})
}

// fail handles an error of an API call made for a page: a 401 signs the
// user out, an API error is shown with its status, anything else is a 500.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	if errors.Is(err, errSignedOut) {
		c.signOut(w, r)
		return
	}
	var ae *apiError
	if errors.As(err, &ae) {
		msg := ae.Message
		if ae.Status == http.StatusNotFound {
			msg = "Not found, or not visible to your token."
		}
		c.renderError(w, r, s, ae.Status, msg)
		return
	}
	c.log.Error("console page", zap.String("path", r.URL.Path), zap.Error(err))
	c.renderError(w, r, s, http.StatusInternalServerError, "Something went wrong; the server log has the details.")
}

// signOut ends the session and sends the browser to the sign-in page (the
// portal's says the session ended: a new link signs in again).
func (c *Console) signOut(w http.ResponseWriter, r *http.Request) {
	c.sessions.end(w, r)
	http.Redirect(w, r, base(r)+"/login?ended=1", http.StatusSeeOther)
}

// redirect sends the browser to target after a POST, with a notice.
// consolePath accepts a redirect target from a form only when it is a path
// of this console and nothing a browser could read as another origin: no
// scheme, host or userinfo; no backslash, space or control character
// (browsers drop tabs and newlines, so "/\t/evil.com" is "//evil.com"),
// raw or percent-encoded in the path; no ".." segment.
func consolePath(back string) (string, bool) { return pathUnder(Prefix, back) }

// pathUnder is consolePath for the pages under prefix (/ui or /portal).
func pathUnder(prefix, back string) (string, bool) {
	if strings.ContainsAny(back, "\\ ") || strings.IndexFunc(back, unicode.IsControl) >= 0 {
		return "", false
	}
	u, err := url.Parse(back)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "", false
	}
	p := u.Path
	if !strings.HasPrefix(p, prefix+"/") || strings.ContainsAny(p, "\\ ") || strings.IndexFunc(p, unicode.IsControl) >= 0 ||
		path.Clean(p) != strings.TrimSuffix(p, "/") && path.Clean(p) != p {
		return "", false
	}
	return back, true
}

// answerFailure answers a form action the API did not carry out. Its
// refusal (any answer but 404, which is the page's own "not found") goes
// back through to (redirect or redirectProblem) with prefix and the API's
// message; anything else is the error page.
func (c *Console) answerFailure(w http.ResponseWriter, r *http.Request, s *session, err error,
	to func(http.ResponseWriter, *http.Request, string, string), back, prefix string) {
	var ae *apiError
	if errors.As(err, &ae) && ae.Status != http.StatusNotFound {
		to(w, r, back, prefix+ae.Message)
		return
	}
	c.fail(w, r, s, err)
}

// redirectProblem sends the browser to target after a POST the API
// refused, with its answer shown as an error there.
func redirectProblem(w http.ResponseWriter, r *http.Request, target, problem string) {
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	http.Redirect(w, r, target+sep+"problem="+urlQueryEscape(problem), http.StatusSeeOther)
}

func redirect(w http.ResponseWriter, r *http.Request, target, notice string) {
	if notice != "" {
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		target += sep + "notice=" + urlQueryEscape(notice)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// timeLayout is how the console writes an instant: 24-hour, with the UTC
// offset, so no time on a page is ambiguous (app.js writes the same).
const timeLayout = "2006-01-02 15:04:05 -07:00"

// inZone writes t in the named zone (UTC when it cannot be loaded).
func inZone(t time.Time, zone string) string {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc = time.UTC
	}
	return t.In(loc).Format(timeLayout)
}

// when renders an instant as <time> with the UTC instant as its title. With
// a zone (an event's page) it is written in that zone; without one (a list
// across events) app.js writes it in the browser's zone (data-local) and the
// page says which zone once.
func when(v any, zone string) template.HTML {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case *time.Time:
		if x == nil {
			return template.HTML(`<span class="muted">—</span>`)
		}
		t = *x
	default:
		return ""
	}
	if t.IsZero() {
		return template.HTML(`<span class="muted">—</span>`)
	}
	attr, text := " data-local", inZone(t, "UTC")
	if zone != "" {
		attr, text = "", inZone(t, zone)
	}
	return template.HTML(fmt.Sprintf(`<time datetime="%s" title="%s"%s>%s</time>`,
		template.HTMLEscapeString(t.UTC().Format(time.RFC3339Nano)),
		template.HTMLEscapeString(t.UTC().Format("2006-01-02 15:04:05 UTC")), attr, template.HTMLEscapeString(text)))
}

func formatMS(ms int64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%d ms", ms)
	case ms < 60_000:
		return fmt.Sprintf("%.1f s", float64(ms)/1000)
	default:
		return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
	}
}

func badgeClass(status string) string {
	switch status {
	case "completed", "active", "ok", "healthy", "succeeded":
		return "badge ok"
	case "failed", "missed", "timed_out", "unavailable", "revoked", "open":
		return "badge bad"
	case "retrying", "paused", "degraded", "awaiting_ack", "running", "dispatching", "disabled":
		return "badge warn"
	default:
		return "badge"
	}
}

func deref(v any) any {
	switch x := v.(type) {
	case *int:
		if x == nil {
			return ""
		}
		return *x
	case *string:
		if x == nil {
			return ""
		}
		return *x
	}
	return v
}

func truncate(n int, s string) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// queryURL is an encoded query string for an href after its "?". Given as
// a string, html/template escapes its = and & as data ("cursor%3d…"), and
// the link lost its cursor and filters: every pager showed page 1 again.
// It is made by url.Values.Encode only, so it needs no further escaping.
func queryURL(v url.Values) template.URL { return template.URL(v.Encode()) }
