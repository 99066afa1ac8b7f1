package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/log"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Every page a console story visits is checked in the browser for the
// accessibility basics and for Content-Security-Policy violations; either
// fails the story.
//
// The accessibility check is our own, evaluated through the DevTools
// protocol (so the page's strict CSP does not apply to it and nothing is
// loaded from the network). axe-core would need a vendored copy of a
// 500 KB script kept up to date, and most of its rules concern markup this
// console never produces; the rules below are the ones a server-rendered
// form-and-table console can break, and each failure names the element.

// a11yCheck returns a list of problems with the current document.
const a11yCheck = `(function(){
  var problems = [];
  function text(el){ return (el.textContent || "").replace(/\s+/g, " ").trim(); }
  function labelled(el){
    var n = (el.getAttribute("aria-label") || "").trim();
    if (n) return n;
    var ids = (el.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean);
    n = ids.map(function(id){ var e = document.getElementById(id); return e ? text(e) : ""; }).join(" ").trim();
    if (n) return n;
    if (el.labels && el.labels.length) {
      n = Array.prototype.map.call(el.labels, text).join(" ").trim();
      if (n) return n;
    }
    return (el.getAttribute("title") || "").trim();
  }
  function who(el){
    var s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    if (el.getAttribute("name")) s += "[name=" + el.getAttribute("name") + "]";
    return s;
  }
  document.querySelectorAll("input, select, textarea").forEach(function(el){
    var type = (el.getAttribute("type") || "").toLowerCase();
    if (type === "hidden" || type === "submit" || type === "button" || type === "reset") return;
    if (!labelled(el)) problems.push("form control without an accessible label: " + who(el));
  });
  document.querySelectorAll("button, input[type=submit], input[type=button], [role=button]").forEach(function(el){
    if (!(labelled(el) || text(el) || (el.value || "").trim())) problems.push("button without a name: " + who(el));
  });
  document.querySelectorAll("a[href]").forEach(function(el){
    if (!(labelled(el) || text(el) || el.querySelector("img[alt]:not([alt=''])"))) problems.push("link without a name: " + el.getAttribute("href"));
  });
  document.querySelectorAll("img").forEach(function(el){
    if (!el.hasAttribute("alt")) problems.push("image without alt: " + el.getAttribute("src"));
  });
  if (document.querySelectorAll("main, [role=main]").length !== 1) problems.push("the page needs exactly one main landmark");
  if (!document.querySelector("header, [role=banner]")) problems.push("the page has no banner landmark");
  var navs = document.querySelectorAll("nav, [role=navigation]");
  if (navs.length > 1) navs.forEach(function(el){ if (!labelled(el)) problems.push("several navigation landmarks, one without a label"); });
  if (!document.documentElement.getAttribute("lang")) problems.push("html has no lang");
  if (!document.title.trim()) problems.push("the page has no title");
  if (!document.querySelector("h1")) problems.push("the page has no h1");
  var seen = {};
  document.querySelectorAll("[id]").forEach(function(el){
    if (seen[el.id]) problems.push("duplicate id: " + el.id);
    seen[el.id] = true;
  });
  (window.__qhronosCSP || []).forEach(function(v){ problems.push("CSP violation: " + v); });
  return problems;
})()`

// cspRecorder runs in every document before the page's own scripts and
// records the violations the browser reports to the page.
const cspRecorder = `window.__qhronosCSP = [];
document.addEventListener("securitypolicyviolation", function(e){
  window.__qhronosCSP.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber);
});`

// browserErrors collects what the browser reports as errors while stories
// run: CSP violations and other security messages, uncaught exceptions and
// console.error. Network errors are not among them: stories open 404 pages
// on purpose and the browser asks for /favicon.ico.
type browserErrors struct {
	mu   sync.Mutex
	list []string
}

func (b *browserErrors) add(s string) {
	b.mu.Lock()
	b.list = append(b.list, s)
	b.mu.Unlock()
}

// take returns the errors reported since the last call.
func (b *browserErrors) take() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.list
	b.list = nil
	return out
}

type browserErrorsKey struct{}

// watchBrowser installs the recorders on the tab of ctx and returns the
// context carrying its error list.
func watchBrowser(ctx context.Context) (context.Context, error) {
	errs := &browserErrors{}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError && e.Entry.Source != log.SourceNetwork {
				errs.add(fmt.Sprintf("%s: %s (%s)", e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		case *runtime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			errs.add("uncaught exception: " + msg)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				errs.add("console.error: " + strings.Join(parts, " "))
			}
		}
	})
	err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := cdppage.AddScriptToEvaluateOnNewDocument(cspRecorder).Do(ctx)
		return err
	}))
	return context.WithValue(ctx, browserErrorsKey{}, errs), err
}

// problems returns what is wrong with the page now shown: the
// accessibility basics (once per document) and the browser errors reported
// since the last call. ok is false while the page is navigating.
func (p *page) problems() (loc string, problems []string, ok bool) {
	// Audit the whole document: on a busy machine a page right after a
	// redirect can still be parsing, its buttons there before their text.
	var complete bool
	if err := chromedp.Run(p.ctx, chromedp.Poll(`document.readyState === "complete"`, &complete,
		chromedp.WithPollingTimeout(pageTimeout))); err != nil {
		return "", nil, false
	}
	var fresh bool
	if err := chromedp.Run(p.ctx, chromedp.Location(&loc), chromedp.Evaluate(
		`(function(){ if (window.__qhronosAudited) return false; window.__qhronosAudited = true; return true; })()`, &fresh)); err != nil {
		return "", nil, false
	}
	if fresh {
		if err := chromedp.Run(p.ctx, chromedp.Evaluate(a11yCheck, &problems)); err != nil {
			return "", nil, false
		}
	}
	if errs, found := p.ctx.Value(browserErrorsKey{}).(*browserErrors); found {
		problems = append(problems, errs.take()...)
	}
	return loc, problems, true
}

// audit fails the story when the page now shown has problems.
func (p *page) audit() {
	p.t.Helper()
	loc, problems, ok := p.problems()
	if ok && len(problems) > 0 {
		p.t.Fatalf("the page at %s fails the console's checks:\n  %s", loc, strings.Join(problems, "\n  "))
	}
}
