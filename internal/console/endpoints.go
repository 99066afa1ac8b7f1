package console

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/qhronos/qhronos/client"
)

// endpointRow is an endpoint as the list and the detail page show it; the
// API never answers a secret, and the console adds none.
type endpointRow struct {
	ID, Name, Description, URL, State, DisabledReason string
	StateChangedAt                                    time.Time
	OpenedAt, CoolDownUntil, PreviousSecretExpiresAt  *time.Time
	Attempts, Succeeded, ConsecutiveFailures          int
	// Ratio is the recent success ratio in percent, "" with no attempts.
	Ratio                      string
	P50, P90, P99              *int64
	Since                      time.Time
	LastError                  string
	LastErrorAt, LastSuccessAt *time.Time
	MaxConcurrency             int
	RateLimit, Timeout         string
	AuthType, AuthDetail       string
	CircuitText                []string
	Headers                    []string
	Tags                       []string
	CreatedBy                  string
	CreatedAt                  time.Time
}

func toEndpointRow(e *client.Endpoint) endpointRow {
	h := e.Health
	row := endpointRow{ID: e.ID, Name: e.Name, Description: e.Description, URL: e.URL, State: string(e.State),
		DisabledReason: e.DisabledReason, StateChangedAt: e.StateChangedAt, OpenedAt: e.OpenedAt,
		CoolDownUntil: e.CoolDownUntil, PreviousSecretExpiresAt: e.PreviousSecretExpiresAt, Attempts: h.Attempts,
		Succeeded: h.Succeeded, ConsecutiveFailures: h.ConsecutiveFailures, P50: h.LatencyMs.P50,
		P90: h.LatencyMs.P90, P99: h.LatencyMs.P99, Since: h.Since, LastErrorAt: h.LastErrorAt,
		LastSuccessAt: h.LastSuccessAt, MaxConcurrency: e.MaxConcurrency, Tags: e.Tags, CreatedBy: e.CreatedBy,
		CreatedAt: e.CreatedAt}
	if h.SuccessRatio != nil {
		row.Ratio = strconv.FormatFloat(*h.SuccessRatio*100, 'f', 1, 64) + " %"
	}
	if h.LastError != nil {
		row.LastError = *h.LastError
	}
	if rl := e.RateLimit; rl != nil {
		row.RateLimit = strconv.FormatFloat(rl.PerSecond, 'f', -1, 64) + " per second"
		if rl.Burst != nil {
			row.RateLimit += fmt.Sprintf(", bursts of %d", *rl.Burst)
		}
	}
	if e.Timeout != nil {
		row.Timeout = *e.Timeout
	}
	row.AuthType = "none"
	if a := e.Auth; a != nil {
		row.AuthType = string(a.Type)
		// Only the non-secret half: who, and where tokens come from.
		var parts []string
		if a.Username != nil {
			parts = append(parts, "user "+*a.Username)
		}
		if a.ClientID != nil {
			parts = append(parts, "client "+*a.ClientID)
		}
		if a.TokenURL != nil {
			parts = append(parts, "token URL "+*a.TokenURL)
		}
		if len(a.Scopes) > 0 {
			parts = append(parts, "scopes "+strings.Join(a.Scopes, " "))
		}
		row.AuthDetail = strings.Join(parts, " · ")
	}
	if c := e.Circuit; c != nil {
		if c.Failures != nil {
			row.CircuitText = append(row.CircuitText, fmt.Sprintf("opens after %d consecutive failures", *c.Failures))
		}
		if c.FailureRatio != nil {
			s := fmt.Sprintf("opens when %.0f %% of attempts fail", *c.FailureRatio*100)
			if c.Window != nil {
				s += " within " + *c.Window
			}
			if c.MinRequests != nil {
				s += fmt.Sprintf(" (after %d attempts)", *c.MinRequests)
			}
			row.CircuitText = append(row.CircuitText, s)
		}
		if c.CoolDown != nil {
			row.CircuitText = append(row.CircuitText, "tries one delivery after "+*c.CoolDown+" open")
		}
		if c.DisableAfter != nil {
			row.CircuitText = append(row.CircuitText, "disables itself after "+*c.DisableAfter+" open")
		}
	}
	for k, v := range e.Headers {
		row.Headers = append(row.Headers, k+": "+v)
	}
	return row
}

var endpointStates = []string{"healthy", "degraded", "open", "disabled"}

type endpointsData struct {
	State     string
	States    []string
	Rows      []endpointRow
	NextQuery template.URL
}

func (c *Console) endpointsPage(w http.ResponseWriter, r *http.Request, s *session) {
	d := endpointsData{States: endpointStates, State: r.URL.Query().Get("state")}
	p := client.ListEndpointsParams{Limit: client.Ptr(pageSize)}
	if d.State != "" {
		p.State = client.Ptr(client.ListEndpointsParamsState(d.State))
	}
	if cur := r.URL.Query().Get("cursor"); cur != "" {
		p.Cursor = &cur
	}
	pg, err := c.sdk(r).Endpoints.List(r.Context(), p)
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	for i := range pg.Items {
		d.Rows = append(d.Rows, toEndpointRow(&pg.Items[i]))
	}
	if pg.NextCursor != "" {
		q := url.Values{"cursor": {pg.NextCursor}}
		if d.State != "" {
			q.Set("state", d.State)
		}
		d.NextQuery = queryURL(q)
	}
	c.render(w, r, s, "endpoints", http.StatusOK, view{Title: "Endpoints", Nav: "endpoints", Data: d})
}

// endpointForm is the new- or edit-endpoint form as typed.
type endpointForm struct {
	ID, Version                                                                              string
	Name, URL, Description, Timeout, MaxConcurrency, RatePerSecond, Failures, CoolDown, Tags string
	Errors                                                                                   map[string]string
	General                                                                                  string
}

// endpointFormFields maps the API's field names to the form's inputs.
var endpointFormFields = map[string]string{"name": "name", "url": "url", "description": "description",
	"timeout": "timeout", "max_concurrency": "max_concurrency", "rate_limit": "rate_per_second",
	"rate_limit.per_second": "rate_per_second", "circuit": "failures", "circuit.failures": "failures",
	"circuit.cool_down": "cool_down", "tags": "tags"}

func (c *Console) newEndpointPage(w http.ResponseWriter, r *http.Request, s *session) {
	c.render(w, r, s, "endpoint_form", http.StatusOK, view{Title: "New endpoint", Nav: "endpoints",
		Data: endpointForm{Tags: s.defaultTags(), Errors: map[string]string{}}})
}

func splitTags(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// formErrors shows a 4xx of the API next to its field (through fields,
// the API's name → the form's), or above the form; it reports false for
// any other error, which the caller fails with.
func formErrors(err error, fields map[string]string, errs map[string]string, general *string) bool {
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status < 400 || ae.Status > 499 || ae.Status == http.StatusNotFound {
		return false
	}
	if f, ok := fields[ae.Field]; ok {
		errs[f] = fieldMessage(ae)
	} else {
		*general = ae.Message
	}
	return true
}

// readEndpointForm reads the endpoint form and builds the API's input;
// malformed numbers are errors of their field.
func readEndpointForm(r *http.Request) (endpointForm, client.EndpointInput) {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	f := endpointForm{Name: v("name"), URL: v("url"), Description: v("description"), Timeout: v("timeout"),
		MaxConcurrency: v("max_concurrency"), RatePerSecond: v("rate_per_second"), Failures: v("failures"),
		CoolDown: v("cool_down"), Tags: v("tags"), Version: v("version"), Errors: map[string]string{}}
	in := client.EndpointInput{Name: f.Name, URL: f.URL, Tags: splitTags(f.Tags)}
	if f.Description != "" {
		in.Description = &f.Description
	}
	if f.Timeout != "" {
		in.Timeout = &f.Timeout
	}
	if f.MaxConcurrency != "" {
		n, err := strconv.Atoi(f.MaxConcurrency)
		if err != nil || n < 0 {
			f.Errors["max_concurrency"] = "must be a whole number, 0 for unlimited"
		}
		in.MaxConcurrency = &n
	}
	if f.RatePerSecond != "" {
		x, err := strconv.ParseFloat(f.RatePerSecond, 64)
		if err != nil {
			f.Errors["rate_per_second"] = "must be a number of deliveries per second"
		}
		in.RateLimit = &client.EndpointRateLimit{PerSecond: x}
	}
	if f.Failures != "" || f.CoolDown != "" {
		in.Circuit = &client.EndpointCircuit{}
		if f.Failures != "" {
			n, err := strconv.Atoi(f.Failures)
			if err != nil {
				f.Errors["failures"] = "must be a whole number"
			}
			in.Circuit.Failures = &n
		}
		if f.CoolDown != "" {
			in.Circuit.CoolDown = &f.CoolDown
		}
	}
	return f, in
}

func (c *Console) createEndpoint(w http.ResponseWriter, r *http.Request, s *session) {
	f, in := readEndpointForm(r)
	if len(f.Errors) == 0 {
		e, err := c.sdk(r).Endpoints.Create(r.Context(), in)
		err = sdkError(err)
		switch {
		case err == nil:
			c.renderEndpointSecret(w, r, s, e, "Endpoint created.")
			return
		case !formErrors(err, endpointFormFields, f.Errors, &f.General):
			c.fail(w, r, s, err)
			return
		}
	}
	c.render(w, r, s, "endpoint_form", http.StatusBadRequest, view{Title: "New endpoint", Nav: "endpoints", Data: f})
}

// formFromEndpoint is the edit form filled in with what the API shows.
func formFromEndpoint(e *client.Endpoint) endpointForm {
	f := endpointForm{ID: e.ID, Version: strconv.Itoa(e.Version), Name: e.Name, URL: e.URL,
		Description: e.Description, Tags: strings.Join(e.Tags, ", "), Errors: map[string]string{}}
	if e.Timeout != nil {
		f.Timeout = *e.Timeout
	}
	if e.MaxConcurrency > 0 {
		f.MaxConcurrency = strconv.Itoa(e.MaxConcurrency)
	}
	if e.RateLimit != nil {
		f.RatePerSecond = strconv.FormatFloat(e.RateLimit.PerSecond, 'f', -1, 64)
	}
	if c := e.Circuit; c != nil {
		if c.Failures != nil {
			f.Failures = strconv.Itoa(*c.Failures)
		}
		if c.CoolDown != nil {
			f.CoolDown = *c.CoolDown
		}
	}
	return f
}

func (c *Console) editEndpointPage(w http.ResponseWriter, r *http.Request, s *session) {
	e, err := c.sdk(r).Endpoints.Get(r.Context(), r.PathValue("id"))
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, "endpoint_form", http.StatusOK, view{Title: "Edit " + e.Name, Nav: "endpoints",
		Data: formFromEndpoint(e)})
}

// updateEndpoint sends only the members the form changed: what the form
// does not show (headers, auth, other circuit rules) keeps its value, and
// a URL shown with fingerprints is not sent back as if it were new.
func (c *Console) updateEndpoint(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	f, in := readEndpointForm(r)
	f.ID = id
	sdk := c.sdk(r)
	cur, err := sdk.Endpoints.Get(r.Context(), id)
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	was := formFromEndpoint(cur)
	patch := map[string]any{}
	if f.Name != was.Name {
		patch["name"] = in.Name
	}
	if f.URL != was.URL {
		patch["url"] = in.URL
	}
	if f.Description != was.Description {
		patch["description"] = f.Description
	}
	if f.Tags != was.Tags {
		patch["tags"] = append([]string{}, in.Tags...)
	}
	if f.Timeout != was.Timeout {
		patch["timeout"] = in.Timeout // nil clears it
	}
	if f.MaxConcurrency != was.MaxConcurrency {
		patch["max_concurrency"] = 0
		if in.MaxConcurrency != nil {
			patch["max_concurrency"] = *in.MaxConcurrency
		}
	}
	if f.RatePerSecond != was.RatePerSecond {
		patch["rate_limit"] = in.RateLimit // nil clears it
	}
	if f.Failures != was.Failures || f.CoolDown != was.CoolDown {
		circuit := client.EndpointCircuit{}
		if cur.Circuit != nil {
			circuit = *cur.Circuit
		}
		circuit.Failures, circuit.CoolDown = nil, nil
		if in.Circuit != nil {
			circuit.Failures, circuit.CoolDown = in.Circuit.Failures, in.Circuit.CoolDown
		}
		patch["circuit"] = circuit
	}
	if len(f.Errors) == 0 {
		var opts []client.CallOption
		if f.Version != "" {
			opts = append(opts, client.IfMatch(versionETag(id, f.Version)))
		}
		_, err := sdk.Endpoints.UpdateFields(r.Context(), id, patch, opts...)
		err = sdkError(err)
		var ae *apiError
		switch {
		case err == nil:
			redirect(w, r, base(r)+"/endpoints/"+url.PathEscape(id), "Endpoint saved.")
			return
		case errors.As(err, &ae) && ae.Status == http.StatusPreconditionFailed:
			f.General = "Someone changed this endpoint since you opened the form. Reload it to see their change."
		case !formErrors(err, endpointFormFields, f.Errors, &f.General):
			c.fail(w, r, s, err)
			return
		}
	}
	c.render(w, r, s, "endpoint_form", http.StatusBadRequest, view{Title: "Edit endpoint", Nav: "endpoints", Data: f})
}

// endpointSecretData is an endpoint's new signing secret, shown once.
type endpointSecretData struct {
	ID, Name, Secret, Heading string
	Expires                   *time.Time
}

func (c *Console) renderEndpointSecret(w http.ResponseWriter, r *http.Request, s *session, e *client.Endpoint, notice string) {
	d := endpointSecretData{ID: e.ID, Name: e.Name, Heading: notice, Expires: e.PreviousSecretExpiresAt}
	if e.Secret != nil {
		d.Secret = *e.Secret
	}
	c.render(w, r, s, "endpoint_secret", http.StatusOK, view{Title: "Signing secret", Nav: "endpoints", Data: d})
}

type endpointData struct {
	Endpoint endpointRow
	Events   []eventLink
	More     bool
	// Test is the answer of "Send test", shown on the page it returns to.
	Test *endpointTestView
	// Circuit is the newest of the endpoint's circuit transitions;
	// CircuitMore says older ones exist (the CLI and API list them all).
	Circuit     []circuitView
	CircuitMore bool
}

// circuitShown is how many circuit transitions the endpoint page lists.
const circuitShown = 20

// circuitView is one circuit transition as the endpoint page shows it.
type circuitView struct {
	At                  time.Time
	Change, What        string
	From, To            string
	Reason, Who         string
	ConsecutiveFailures int
}

// circuitWords says each change for people.
var circuitWords = map[string]string{
	"opened":   "Circuit opened: deliveries wait for a trial after the cool-down",
	"reopened": "Trial delivery failed: the circuit stays open for another cool-down",
	"closed":   "Trial delivery succeeded: the circuit closed",
	"disabled": "Endpoint disabled",
	"enabled":  "Endpoint enabled",
}

func toCircuitView(e *client.CircuitEntry) circuitView {
	v := circuitView{At: e.At, Change: string(e.Change), What: circuitWords[string(e.Change)],
		From: string(e.FromState), To: string(e.ToState), Reason: e.Reason, Who: e.Subject,
		ConsecutiveFailures: e.ConsecutiveFailures}
	if v.What == "" {
		v.What = v.Change
	}
	if v.Who != "" && e.Channel != "" {
		v.Who += " (" + e.Channel + ")"
	}
	return v
}

// endpointTestView is a test delivery's answer as the page shows it.
type endpointTestView struct {
	Delivered  bool
	Status     string // "" when no HTTP answer came
	DurationMS int64
	Error      string
	Excerpt    string
	Truncated  bool
}

func toEndpointTestView(t *client.EndpointTestResult) *endpointTestView {
	v := &endpointTestView{Delivered: t.Delivered, DurationMS: t.DurationMs, Truncated: t.Truncated}
	if t.StatusCode != nil {
		v.Status = strconv.Itoa(*t.StatusCode)
	}
	if t.Error != nil {
		v.Error = *t.Error
	}
	if t.ResponseExcerpt != nil {
		v.Excerpt = *t.ResponseExcerpt
	}
	return v
}

// eventLink is an event named on a resource's page.
type eventLink struct {
	ID, Name, Status string
	NextRunAt        *time.Time
}

// eventLinks lists the events p selects (newest first) as links, and
// whether more follow.
func eventLinks(ctx context.Context, sdk *client.Client, p client.ListEventsParams) ([]eventLink, bool, error) {
	evs, err := sdk.Events.List(ctx, p)
	if err = sdkError(err); err != nil {
		return nil, false, err
	}
	links := make([]eventLink, 0, len(evs.Items))
	for _, ev := range evs.Items {
		links = append(links, eventLink{ID: ev.ID, Name: ev.Name, Status: string(ev.Status), NextRunAt: ev.NextRunAt})
	}
	return links, evs.NextCursor != "", nil
}

// usersShown is how many of the events using an endpoint or calendar its
// page lists.
const usersShown = 50

func (c *Console) endpointPage(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderEndpointPage(w, r, s, nil)
}

// testEndpoint sends the endpoint a test delivery (POST /endpoints/{id}/test)
// and shows the page again with the receiver's answer. A refusal (a broker
// endpoint, a token without write access) returns to the page with it.
func (c *Console) testEndpoint(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	res, err := c.sdk(r).Endpoints.Test(r.Context(), id)
	if err = sdkError(err); err != nil {
		c.answerFailure(w, r, s, err, redirectProblem, base(r)+"/endpoints/"+url.PathEscape(id), "Test refused: ")
		return
	}
	c.renderEndpointPage(w, r, s, toEndpointTestView(res))
}

func (c *Console) renderEndpointPage(w http.ResponseWriter, r *http.Request, s *session, test *endpointTestView) {
	sdk, ctx := c.sdk(r), r.Context()
	e, err := sdk.Endpoints.Get(ctx, r.PathValue("id"))
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := endpointData{Endpoint: toEndpointRow(e), Test: test}
	// The portal reads no events: its page leaves out who delivers here.
	if !s.inPortal() {
		if d.Events, d.More, err = eventLinks(ctx, sdk, client.ListEventsParams{EndpointID: &e.ID,
			Limit: client.Ptr(usersShown)}); err != nil {
			c.fail(w, r, s, err)
			return
		}
	}
	hist, err := sdk.Endpoints.CircuitHistory(ctx, e.ID, client.CircuitHistoryParams{Limit: client.Ptr(circuitShown)})
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.CircuitMore = hist.NextCursor != ""
	for i := range hist.Items {
		d.Circuit = append(d.Circuit, toCircuitView(&hist.Items[i]))
	}
	c.render(w, r, s, "endpoint", http.StatusOK, view{Title: e.Name, Nav: "endpoints", Data: d})
}

// endpointActions are the endpoint page's buttons, each confirmed first.
var endpointActions = map[string]struct {
	Verb, Question string
	Danger         bool
}{
	"disable":       {"Disable", "Disable this endpoint? Its due deliveries fail with reason endpoint_disabled until you enable it.", true},
	"enable":        {"Enable", "Enable this endpoint? Its circuit closes and the deliveries that failed while it was disabled are resumed.", false},
	"rotate-secret": {"Rotate secret", "Issue a new signing secret? The old one keeps signing for 24 hours; the new one is shown once.", true},
	"delete":        {"Delete", "Delete this endpoint? The API refuses while an event names it.", true},
}

func (c *Console) confirmEndpointAction(w http.ResponseWriter, r *http.Request, s *session) {
	id, name := r.PathValue("id"), r.PathValue("action")
	a, ok := endpointActions[name]
	if !ok {
		c.renderError(w, r, s, http.StatusNotFound, "There is no such action.")
		return
	}
	back := base(r) + "/endpoints/" + url.PathEscape(id)
	c.render(w, r, s, "confirm", http.StatusOK, view{Title: a.Verb + " endpoint", Nav: "endpoints", Data: confirmData{
		Action: name, Verb: a.Verb, Danger: a.Danger, Question: a.Question, Post: back + "/do/" + name, Cancel: back}})
}

func (c *Console) endpointAction(w http.ResponseWriter, r *http.Request, s *session) {
	id, name := r.PathValue("id"), r.PathValue("action")
	back := base(r) + "/endpoints/" + url.PathEscape(id)
	sdk, ctx := c.sdk(r), r.Context()
	var (
		e      *client.Endpoint
		err    error
		notice string
	)
	switch name {
	case "disable":
		_, err = sdk.Endpoints.Disable(ctx, id)
		notice = "Endpoint disabled."
	case "enable":
		e, err = sdk.Endpoints.Enable(ctx, id)
		notice = "Endpoint enabled."
		if err == nil && e.Resumed != nil && *e.Resumed > 0 {
			notice += fmt.Sprintf(" %d deliveries resumed.", *e.Resumed)
		}
	case "rotate-secret":
		e, err = sdk.Endpoints.RotateSecret(ctx, id, 24*time.Hour)
		if err == nil {
			c.renderEndpointSecret(w, r, s, e, "New signing secret.")
			return
		}
	case "delete":
		err = sdk.Endpoints.Delete(ctx, id)
		back, notice = base(r)+"/endpoints", "Endpoint deleted."
	default:
		c.renderError(w, r, s, http.StatusNotFound, "There is no such action.")
		return
	}
	if err = sdkError(err); err != nil {
		c.answerFailure(w, r, s, err, redirectProblem, base(r)+"/endpoints/"+url.PathEscape(id), "Refused: ")
		return
	}
	redirect(w, r, back, notice)
}
