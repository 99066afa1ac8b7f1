package e2e

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

// TestConsolePortal: a customer opens the portal link their provider made,
// on both stores.
func TestConsolePortal(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		portalStory(t, srv, p)
	})
}

// portalCustomers are customer-42's and customer-43's endpoints and
// subscriptions, made by the operator over the API.
type portalCustomers struct {
	mine, theirs, theirSub string
}

func newPortalCustomers(t *testing.T, srv consoleServer) portalCustomers {
	srv.api(t, srv.master, "POST", "/topics", map[string]any{"name": "orders.created", "description": "an order was placed"})
	srv.api(t, srv.master, "POST", "/topics", map[string]any{"name": "orders.shipped"})
	mine := srv.api(t, srv.master, "POST", "/endpoints", map[string]any{"name": "acme hooks",
		"url": "https://acme.example.com/hooks", "tags": []string{"customer-42"}})["id"].(string)
	theirs := srv.api(t, srv.master, "POST", "/endpoints", map[string]any{"name": "globex hooks",
		"url": "https://globex.example.com/hooks", "tags": []string{"customer-43"}})["id"].(string)
	srv.api(t, srv.master, "POST", "/subscriptions", map[string]any{"topic": "orders.created", "endpoint_id": mine,
		"description": "acme orders", "tags": []string{"customer-42"}})
	theirSub := srv.api(t, srv.master, "POST", "/subscriptions", map[string]any{"topic": "orders.created",
		"endpoint_id": theirs, "description": "globex orders", "tags": []string{"customer-43"}})["id"].(string)
	return portalCustomers{mine: mine, theirs: theirs, theirSub: theirSub}
}

// portalLink makes a link for customer-42 and returns its path and query.
func portalLink(t *testing.T, srv consoleServer, back string) string {
	link := srv.api(t, srv.master, "POST", "/portal-links", map[string]any{"tags": []string{"customer-42"},
		"expires_in": "1h", "return_url": back})
	u, err := url.Parse(link["url"].(string))
	require.NoError(t, err)
	require.Equal(t, srv.url, u.Scheme+"://"+u.Host, "the link is under the server's public URL")
	return u.RequestURI()
}

// portalStory: the customer opens the link, lands on their endpoints with
// their tag named in the header, sees only their endpoint and subscription,
// subscribes their endpoint to another topic (the form starts with their
// tag), cannot open the other customer's endpoint or subscription nor any
// page of the operator's, and a second open of the link is refused.
func portalStory(t *testing.T, srv consoleServer, p *page) {
	c := newPortalCustomers(t, srv)
	link := portalLink(t, srv, "https://app.example.com/settings/webhooks")

	p.open(link)
	p.waitText("h1", "Endpoints", pageTimeout)
	p.waitText("#portal-scope", "customer-42", pageTimeout)
	require.Equal(t, "https://app.example.com/settings/webhooks", p.attr("#portal-back", "href"))
	p.waitFor("only the portal's navigation",
		`Array.from(document.querySelectorAll("header nav a")).map(function(a){return a.innerText.trim();}).join(",") === "Endpoints,Subscriptions,Topics,Failures"`,
		pageTimeout)
	p.waitText("#endpoints", "acme hooks", pageTimeout)
	p.waitFor("no other customer's endpoint", `document.querySelector("#endpoints").innerText.indexOf("globex") < 0`, pageTimeout)
	loc, err := p.location()
	require.NoError(t, err)
	require.NotContains(t, loc, "code=", "the code left the address bar")
	p.shot("portal-endpoints", 1280, false)

	p.click(`header nav a[href="/portal/subscriptions"]`)
	p.waitText("#subscriptions", "acme orders", pageTimeout)
	p.waitFor("no other customer's subscription", `document.querySelector("#subscriptions").innerText.indexOf("globex") < 0`, pageTimeout)
	p.waitFor("the form starts with the portal's tag", `document.querySelector("#s-tags").value === "customer-42"`, pageTimeout)
	p.waitFor("only their endpoint to choose", `Array.from(document.querySelectorAll("#s-endpoint option")).filter(function(o){return o.value;}).map(function(o){return o.value;}).join(",") === `+fmt.Sprintf("%q", c.mine), pageTimeout)
	p.fill("#s-topic", "orders.shipped")
	p.selectValue("#s-endpoint", c.mine)
	p.fill("#s-description", "acme shipments")
	p.click(`#subscription-form button[type=submit]`)
	p.waitText(".notice", "Subscription created", pageTimeout)
	p.waitText("#subscription-endpoint", "acme hooks", pageTimeout)
	loc, err = p.location()
	require.NoError(t, err)
	require.Contains(t, loc, srv.url+"/portal/subscriptions/", "it stays in the portal")
	var subs struct {
		Data []struct {
			Description string   `json:"description"`
			CreatedBy   string   `json:"created_by"`
			Tags        []string `json:"tags"`
		}
	}
	srv.apiList(t, "/subscriptions?topic=orders.shipped", &subs)
	require.Len(t, subs.Data, 1)
	require.Equal(t, "acme shipments", subs.Data[0].Description)
	require.Equal(t, []string{"customer-42"}, subs.Data[0].Tags)
	require.Equal(t, "portal:customer-42", subs.Data[0].CreatedBy)

	p.click(`header nav a[href="/portal/topics"]`)
	p.waitText(`#topics tr[data-topic="orders.created"]`, "an order was placed", pageTimeout)
	p.waitText("#topics-forbidden", "The catalogue is your provider's", pageTimeout)

	// Another customer's, and the operator's pages, are out of reach.
	p.open("/portal/endpoints/" + c.theirs)
	p.waitText("main", "Not found, or not visible to your token.", pageTimeout)
	p.open("/portal/subscriptions/" + c.theirSub)
	p.waitText("main", "Not found, or not visible to your token.", pageTimeout)
	for _, path := range []string{"/portal/events", "/portal/tokens", "/portal/notifications"} {
		p.open(path)
		p.waitText("main", "There is no such page in the portal.", pageTimeout)
	}
	p.open("/ui/tokens")
	p.waitText("h1", "Sign in", pageTimeout)

	p.open(link)
	p.waitText("main", "This portal link was already used or has expired", pageTimeout)
}

// TestConsolePortalInAFrame: the customer's application (another origin of
// the same site) frames the portal, allowed by
// console.portal.frame_ancestors: the link signs in inside the frame, the
// portal works there, and its Back link leaves the frame for the page the
// link names.
func TestConsolePortalInAFrame(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/back" {
			_, _ = fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Settings</title></head><body>
<header><p>Acme app</p></header><main><h1 id="back-home">Settings</h1></main></body></html>`)
			return
		}
		_, _ = fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>Webhooks</title></head><body>
<header><p>Acme app</p></header><main><h1>Webhooks</h1>
<iframe id="portal" title="Webhooks portal" width="1200" height="700" src="%s"></iframe></main></body></html>`,
			html.EscapeString(r.URL.Query().Get("src")))
	}))
	t.Cleanup(app.Close)
	ctx := browser(t)
	p := start(t, "console-portal-frame", map[string]string{"QHRONOS_LOG_LEVEL": "debug",
		"QHRONOS_CONSOLE_PORTAL_FRAME_ANCESTORS": app.URL})
	eventually(t, readyTimeout, "the banner shows the master token", func() bool {
		return masterTokenLine.MatchString(p.stderr.String())
	})
	srv := consoleServer{url: p.url, master: masterTokenLine.FindStringSubmatch(p.stderr.String())[1], logs: p.stderr.String}
	newPortalCustomers(t, srv)
	link := srv.url + portalLink(t, srv, app.URL+"/back")

	res, err := http.Get(srv.url + "/portal/login")
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-ancestors "+app.URL+";")
	require.Empty(t, res.Header.Get("X-Frame-Options"))

	pg := &page{t: t, ctx: ctx, base: app.URL}
	pg.open("/?src=" + url.QueryEscape(link))
	require.Contains(t, pg.inFrame("#portal", "#portal-scope", chromedp.Text), "customer-42",
		"the link signed in inside the frame")
	endpoints := pg.inFrame("#portal", "#endpoints", chromedp.Text)
	require.Contains(t, endpoints, "acme hooks")
	require.False(t, strings.Contains(endpoints, "globex"), endpoints)
	pg.inFrame("#portal", "#portal-back", func(sel any, _ *string, opts ...chromedp.QueryOption) chromedp.QueryAction {
		return chromedp.Click(sel, opts...)
	})
	pg.waitText("#back-home", "Settings", pageTimeout)
	loc, err := pg.location()
	require.NoError(t, err)
	require.Equal(t, app.URL+"/back", loc, "Back leaves the frame")

	// Opened again, the link is refused; and the server's log, at debug,
	// holds neither the code nor anything of the session.
	pg.open("/?src=" + url.QueryEscape(link))
	require.Contains(t, pg.inFrame("#portal", "#portal-message", chromedp.Text), "already used or has expired")
	code := link[strings.Index(link, "code=")+len("code="):]
	require.Contains(t, srv.logs(), "request", "the access log is on")
	require.NotContains(t, srv.logs(), code)
	require.NotContains(t, srv.logs(), "qhronos_portal")
}

// inFrame runs act on the element sel inside the frame the top document's
// frame selector names, once it is there, and returns the text act read.
// The frame's document is looked up afresh on each try: it changes as the
// frame navigates (the link redirects), and a node read before is stale.
func (p *page) inFrame(frame, sel string, act func(sel any, text *string, opts ...chromedp.QueryOption) chromedp.QueryAction) string {
	p.t.Helper()
	var text string
	done := qhronostest.Eventually(pageTimeout, nil, func() bool {
		ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
		defer cancel()
		var frames []*cdp.Node
		if chromedp.Run(ctx, chromedp.Nodes(frame, &frames, chromedp.ByQuery)) != nil || len(frames) == 0 {
			return false
		}
		return chromedp.Run(ctx, chromedp.WaitVisible(sel, chromedp.ByQuery, chromedp.FromNode(frames[0])),
			act(sel, &text, chromedp.ByQuery, chromedp.FromNode(frames[0]))) == nil
	})
	require.True(p.t, done, "%s in the frame %s", sel, frame)
	p.audit()
	return text
}
