package console

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/qhronos/qhronos/client"
)

// The Subscriptions pages: endpoints subscribed to a topic or a pattern of
// topics (digest.*), each with a CEL filter over the firing. They are
// scoped by tags like endpoints: a token sees the subscriptions whose tags
// it can read, and gives new ones tags inside its scope.

// filterVariables are what a subscription's filter reads, as the form's
// hint lists them.
var filterVariables = []string{"topic", "name", "tags", "metadata", "scheduled_at", "payload"}

// subscriptionRow is a subscription as the pages show it.
type subscriptionRow struct {
	ID, Topic, EndpointID, EndpointName, Filter, Description string
	Tags                                                     []string
	Paused                                                   bool
	Version                                                  int64
	CreatedBy                                                string
	CreatedAt, UpdatedAt                                     time.Time
}

// Pattern says whether the topic is a pattern (a * segment) rather than a
// topic's name, which has a page.
func (s subscriptionRow) Pattern() bool { return strings.Contains(s.Topic, "*") }

func toSubscriptionRow(sub *client.TopicSubscription) subscriptionRow {
	return subscriptionRow{ID: sub.ID, Topic: sub.Topic, EndpointID: sub.EndpointID, Filter: str(sub.Filter),
		Description: sub.Description, Tags: sub.Tags, Paused: sub.Paused, Version: sub.Version,
		CreatedBy: sub.CreatedBy, CreatedAt: sub.CreatedAt, UpdatedAt: sub.UpdatedAt}
}

// subscriptionRows names each subscription's endpoint: from names (the
// endpoints already listed), else by reading it; one the token cannot read
// keeps its id.
func (c *Console) subscriptionRows(r *http.Request, subs []client.TopicSubscription, names map[string]string) []subscriptionRow {
	if names == nil {
		names = map[string]string{}
	}
	rows := make([]subscriptionRow, 0, len(subs))
	for i := range subs {
		row := toSubscriptionRow(&subs[i])
		name, ok := names[row.EndpointID]
		if !ok {
			if e, err := c.sdk(r).Endpoints.Get(r.Context(), row.EndpointID); err == nil {
				name = e.Name
			}
			names[row.EndpointID] = name
		}
		row.EndpointName = name
		rows = append(rows, row)
	}
	return rows
}

// subscriptionFilter is the list's filters as typed.
type subscriptionFilter struct {
	Topic, Paused, Tags string
}

func (f subscriptionFilter) query() url.Values {
	q := url.Values{}
	if f.Topic != "" {
		q.Set("topic", f.Topic)
	}
	if f.Paused != "" {
		q.Set("paused", f.Paused)
	}
	if f.Tags != "" {
		q.Set("tags", f.Tags)
	}
	return q
}

// Any says whether a filter is set.
func (f subscriptionFilter) Any() bool { return f.Topic != "" || f.Paused != "" || f.Tags != "" }

// subscriptionForm is the create or edit form as typed.
type subscriptionForm struct {
	ID, Version                                  string
	Topic, EndpointID, Filter, Description, Tags string
	Paused                                       bool
	Errors                                       map[string]string
	General                                      string
}

func newSubscriptionForm() subscriptionForm { return subscriptionForm{Errors: map[string]string{}} }

// subscriptionFormFields maps the API's field names to the form's inputs.
var subscriptionFormFields = map[string]string{"topic": "topic", "endpoint_id": "endpoint_id", "filter": "filter",
	"description": "description", "tags": "tags", "paused": "paused"}

func readSubscriptionForm(r *http.Request) subscriptionForm {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	f := newSubscriptionForm()
	f.Topic, f.EndpointID, f.Description, f.Tags = v("topic"), v("endpoint_id"), v("description"), v("tags")
	f.Filter, f.Version, f.Paused = textareaValue(r, "filter"), v("version"), r.PostFormValue("paused") != ""
	return f
}

// subscriptionFields is what the form's shared fields show: the form as
// typed and what it offers.
type subscriptionFields struct {
	subscriptionForm
	Choices subscriptionChoices
}

// WithChoices pairs the form with its choices for the shared fields.
func (f subscriptionForm) WithChoices(ch subscriptionChoices) subscriptionFields {
	return subscriptionFields{subscriptionForm: f, Choices: ch}
}

// subscriptionChoices is what the forms offer: the catalogue's names for
// the topic's datalist and the endpoints the token can read. Names maps
// the endpoints' ids to their names for the list.
type subscriptionChoices struct {
	TopicNames []string
	Endpoints  []endpointChoice
	Names      map[string]string
	Variables  []string
}

func (c *Console) subscriptionChoices(r *http.Request) (subscriptionChoices, error) {
	sdk, ctx := c.sdk(r), r.Context()
	ch := subscriptionChoices{Names: map[string]string{}, Variables: filterVariables}
	topics, err := sdk.Topics.List(ctx, client.ListTopicsParams{Limit: client.Ptr(pickerLimit)})
	if err != nil && !unlisted(err) {
		return ch, sdkError(err)
	}
	if topics != nil {
		for _, t := range topics.Items {
			ch.TopicNames = append(ch.TopicNames, t.Name)
		}
	}
	eps, err := sdk.Endpoints.List(ctx, client.ListEndpointsParams{Limit: client.Ptr(pickerLimit)})
	if err != nil && !unlisted(err) {
		return ch, sdkError(err)
	}
	if eps != nil {
		for _, e := range eps.Items {
			ch.Endpoints = append(ch.Endpoints, endpointChoice{ID: e.ID, Name: e.Name, URL: e.URL, State: string(e.State)})
			ch.Names[e.ID] = e.Name
		}
	}
	return ch, nil
}

type subscriptionsData struct {
	Filter    subscriptionFilter
	Rows      []subscriptionRow
	First     bool
	NextQuery template.URL
	FirstPage template.URL
	Form      subscriptionForm
	Choices   subscriptionChoices
}

func (c *Console) subscriptionsData(r *http.Request, d *subscriptionsData) error {
	q := r.URL.Query()
	d.Filter = subscriptionFilter{Topic: strings.TrimSpace(q.Get("topic")), Tags: strings.TrimSpace(q.Get("tags"))}
	if p := q.Get("paused"); p == "true" || p == "false" {
		d.Filter.Paused = p
	}
	var err error
	if d.Choices, err = c.subscriptionChoices(r); err != nil {
		return err
	}
	p := client.ListSubscriptionsParams{Limit: client.Ptr(pageSize)}
	if d.Filter.Topic != "" {
		p.Topic = &d.Filter.Topic
	}
	if d.Filter.Paused != "" {
		p.Paused = client.Ptr(d.Filter.Paused == "true")
	}
	if tags := splitTags(d.Filter.Tags); len(tags) > 0 {
		p.Tags = tags
	}
	cur := q.Get("cursor")
	if cur != "" {
		p.Cursor = &cur
	}
	pg, err := c.sdk(r).Subscriptions.List(r.Context(), p)
	if err = sdkError(err); err != nil {
		return err
	}
	d.First, d.FirstPage = cur == "", queryURL(d.Filter.query())
	d.Rows = c.subscriptionRows(r, pg.Items, d.Choices.Names)
	if pg.NextCursor != "" {
		next := d.Filter.query()
		next.Set("cursor", pg.NextCursor)
		d.NextQuery = queryURL(next)
	}
	return nil
}

func (c *Console) subscriptionsPage(w http.ResponseWriter, r *http.Request, s *session) {
	d := subscriptionsData{Form: newSubscriptionForm()}
	// A topic filtered on is the one a new subscription most likely names.
	d.Form.Topic, d.Form.Tags = strings.TrimSpace(r.URL.Query().Get("topic")), s.defaultTags()
	if err := c.subscriptionsData(r, &d); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
			// A filter the API refused (a malformed tag): the page without
			// rows, its message above them.
			c.render(w, r, s, "subscriptions", http.StatusBadRequest, view{Title: "Subscriptions",
				Nav: "subscriptions", Error: ae.Message, Data: d})
			return
		}
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, "subscriptions", http.StatusOK, view{Title: "Subscriptions", Nav: "subscriptions", Data: d})
}

// createSubscription subscribes an endpoint and opens the subscription's
// page; the API's refusal is shown next to the field it names (the filter's
// with CEL's message), what was typed kept.
func (c *Console) createSubscription(w http.ResponseWriter, r *http.Request, s *session) {
	f := readSubscriptionForm(r)
	in := client.TopicSubscriptionRequest{Topic: &f.Topic, EndpointID: &f.EndpointID, Tags: splitTags(f.Tags)}
	if f.Filter != "" {
		in.Filter = &f.Filter
	}
	if f.Description != "" {
		in.Description = &f.Description
	}
	if f.Paused {
		in.Paused = client.Ptr(true)
	}
	sub, err := c.sdk(r).Subscriptions.Create(r.Context(), in)
	err = sdkError(err)
	switch {
	case err == nil:
		notice := "Subscription created."
		if sub.Paused {
			notice = "Subscription created, paused."
		}
		redirect(w, r, base(r)+"/subscriptions/"+url.PathEscape(sub.ID), notice)
		return
	case !formErrors(err, subscriptionFormFields, f.Errors, &f.General):
		c.fail(w, r, s, err)
		return
	}
	d := subscriptionsData{Form: f}
	if err := c.subscriptionsData(r, &d); err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, "subscriptions", http.StatusBadRequest, view{Title: "Subscriptions", Nav: "subscriptions", Data: d})
}

type subscriptionData struct {
	Sub     subscriptionRow
	Form    subscriptionForm
	Choices subscriptionChoices
	// Deliveries are the attempts made for it, newest first (deliveries.go).
	Deliveries subscriptionDeliveries
}

func formFromSubscription(row subscriptionRow) subscriptionForm {
	f := newSubscriptionForm()
	f.ID, f.Version, f.Topic, f.EndpointID = row.ID, strconv.FormatInt(row.Version, 10), row.Topic, row.EndpointID
	f.Filter, f.Description, f.Tags, f.Paused = row.Filter, row.Description, strings.Join(row.Tags, ", "), row.Paused
	return f
}

func (c *Console) subscriptionPage(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderSubscriptionPage(w, r, s, nil, http.StatusOK)
}

// renderSubscriptionPage renders the page of the subscription in the path;
// form, when set, is an edit the API refused (shown with its errors).
func (c *Console) renderSubscriptionPage(w http.ResponseWriter, r *http.Request, s *session, form *subscriptionForm,
	status int) {
	sub, err := c.sdk(r).Subscriptions.Get(r.Context(), r.PathValue("id"))
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := subscriptionData{}
	if d.Choices, err = c.subscriptionChoices(r); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Sub = c.subscriptionRows(r, []client.TopicSubscription{*sub}, d.Choices.Names)[0]
	if !slices.ContainsFunc(d.Choices.Endpoints, func(e endpointChoice) bool { return e.ID == d.Sub.EndpointID }) {
		// Beyond the picker's first page, or not readable by this token:
		// offered anyway, so the form sends back the endpoint it has.
		name := d.Sub.EndpointName
		if name == "" {
			name = d.Sub.EndpointID + " (not visible to your token)"
		}
		d.Choices.Endpoints = append(d.Choices.Endpoints, endpointChoice{ID: d.Sub.EndpointID, Name: name})
	}
	if d.Deliveries, err = c.recentDeliveries(r, sub.ID); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Form = formFromSubscription(d.Sub)
	if form != nil {
		d.Form = *form
	}
	c.render(w, r, s, "subscription", status, view{Title: "Subscription to " + sub.Topic, Nav: "subscriptions", Data: d})
}

// updateSubscription saves the edit form: only the members it changed go
// in the PATCH (an emptied filter as null: every firing again), conditional
// on the version the form was read at. Pausing is the page's buttons'.
func (c *Console) updateSubscription(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	sdk, ctx := c.sdk(r), r.Context()
	stored, err := sdk.Subscriptions.Get(ctx, id)
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	was := toSubscriptionRow(stored)
	f := readSubscriptionForm(r)
	f.ID, f.Paused = stored.ID, stored.Paused
	patch := map[string]any{}
	if f.Topic != was.Topic {
		patch["topic"] = f.Topic
	}
	if f.EndpointID != was.EndpointID {
		patch["endpoint_id"] = f.EndpointID
	}
	if f.Filter != strings.TrimSpace(was.Filter) {
		if f.Filter == "" {
			patch["filter"] = nil
		} else {
			patch["filter"] = f.Filter
		}
	}
	if f.Description != strings.TrimSpace(was.Description) {
		if f.Description == "" {
			patch["description"] = nil
		} else {
			patch["description"] = f.Description
		}
	}
	if tags := splitTags(f.Tags); !slices.Equal(tags, was.Tags) && (len(tags) > 0 || len(was.Tags) > 0) {
		if tags == nil {
			tags = []string{}
		}
		patch["tags"] = tags
	}
	back := base(r) + "/subscriptions/" + url.PathEscape(stored.ID)
	if len(patch) == 0 {
		redirect(w, r, back, "Nothing changed.")
		return
	}
	var opts []client.CallOption
	if f.Version != "" {
		opts = append(opts, client.IfMatch(versionETag(stored.ID, f.Version)))
	}
	_, err = sdk.Subscriptions.UpdateFields(ctx, stored.ID, patch, opts...)
	err = sdkError(err)
	var ae *apiError
	switch {
	case err == nil:
		redirect(w, r, back, "Subscription saved.")
	case errors.As(err, &ae) && ae.Status == http.StatusPreconditionFailed:
		f.General = "Someone changed this subscription since you opened the form. Reload it to see their change."
		c.renderSubscriptionPage(w, r, s, &f, http.StatusBadRequest)
	case formErrors(err, subscriptionFormFields, f.Errors, &f.General):
		c.renderSubscriptionPage(w, r, s, &f, http.StatusBadRequest)
	default:
		c.answerFailure(w, r, s, err, redirectProblem, back, "Not saved: ")
	}
}

// pauseSubscription pauses (or resumes) the subscription and comes back to
// its page, where the API's refusal is shown too. Each undoes the other, so
// neither asks first.
func (c *Console) pauseSubscription(paused bool) handler {
	done := "Resumed: its firings are delivered again."
	if paused {
		done = "Paused: none of its firings is delivered until it is resumed."
	}
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		id := r.PathValue("id")
		subs := c.sdk(r).Subscriptions
		set := subs.Resume
		if paused {
			set = subs.Pause
		}
		back := base(r) + "/subscriptions/" + url.PathEscape(id)
		if _, err := set(r.Context(), id); err != nil {
			c.answerFailure(w, r, s, sdkError(err), redirectProblem, back, "Refused: ")
			return
		}
		redirect(w, r, back, done)
	}
}

func (c *Console) confirmDeleteSubscription(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	back := base(r) + "/subscriptions/" + url.PathEscape(id)
	c.render(w, r, s, "confirm", http.StatusOK, view{Title: "Delete subscription", Nav: "subscriptions",
		Data: confirmData{Action: "delete", Verb: "Delete", Danger: true,
			Question: "Delete this subscription? Its endpoint no longer gets the firings of its topic.",
			Post:     back + "/delete", Cancel: back}})
}

func (c *Console) deleteSubscription(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	if err := sdkError(c.sdk(r).Subscriptions.Delete(r.Context(), id)); err != nil {
		c.answerFailure(w, r, s, err, redirectProblem, base(r)+"/subscriptions/"+url.PathEscape(id), "Not deleted: ")
		return
	}
	redirect(w, r, base(r)+"/subscriptions", "Subscription deleted.")
}
