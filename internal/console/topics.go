package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/qhronos/qhronos/client"
)

// The Topics pages: the catalogue of what can fire (GET /topics, which
// every token reads) and a topic's page with its JSON Schema, the
// subscriptions naming it and the events that target it. Only admins
// change the catalogue: the create and edit forms and Delete are shown to
// a token the API lets manage it, and a refusal is the API's own.

// topicRow is a topic as the pages show it; Schema is the JSON Schema
// indented, "" when the topic has none.
type topicRow struct {
	Name, Description, Schema string
	Version                   int64
	CreatedBy                 string
	CreatedAt, UpdatedAt      time.Time
}

// HasSchema says whether events targeting the topic must follow a schema.
func (t topicRow) HasSchema() bool { return t.Schema != "" }

// PatternExample is a pattern matching the topic: its last segment a *
// (digest.daily → digest.*).
func (t topicRow) PatternExample() string {
	if i := strings.LastIndexByte(t.Name, '.'); i >= 0 {
		return t.Name[:i] + ".*"
	}
	return "*"
}

func toTopicRow(t *client.Topic) topicRow {
	return topicRow{Name: t.Name, Description: t.Description, Schema: prettySchema(t.Schema), Version: t.Version,
		CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

// prettySchema indents a schema for reading and editing; null is "".
func prettySchema(raw *json.RawMessage) string {
	if raw == nil || len(bytes.TrimSpace(*raw)) == 0 || string(bytes.TrimSpace(*raw)) == "null" {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, *raw, "", "  "); err != nil {
		return string(*raw)
	}
	return buf.String()
}

// topicForm is the create or edit form as typed: the schema is a JSON
// document in a textarea, empty for none.
type topicForm struct {
	Name, Description, Schema, Version string
	Errors                             map[string]string
	General                            string
}

func newTopicForm() topicForm { return topicForm{Errors: map[string]string{}} }

// topicFormFields maps the API's field names to the form's inputs.
var topicFormFields = map[string]string{"name": "name", "description": "description", "schema": "schema"}

// textareaValue is what a textarea sent, its line breaks (CR LF from a
// browser) as LF, trimmed.
func textareaValue(r *http.Request, k string) string {
	return strings.TrimSpace(strings.ReplaceAll(r.PostFormValue(k), "\r\n", "\n"))
}

// readTopicForm reads the form; a schema that is not JSON is an error of
// its field before the API is asked. schema is the document compacted,
// nil when the box is empty.
func readTopicForm(r *http.Request) (f topicForm, schema json.RawMessage) {
	f = newTopicForm()
	f.Name, f.Description = strings.TrimSpace(r.PostFormValue("name")), strings.TrimSpace(r.PostFormValue("description"))
	f.Schema, f.Version = textareaValue(r, "schema"), strings.TrimSpace(r.PostFormValue("version"))
	if f.Schema != "" {
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(f.Schema)); err != nil {
			f.Errors["schema"] = "must be a JSON document (a JSON Schema such as {\"type\": \"object\"}), or empty for none: " + err.Error()
		} else {
			schema = buf.Bytes()
		}
	}
	return f, schema
}

// mayAdminister reports whether the session's token has admin access (or
// is the master token): the API lists tokens only to those, the same
// access its catalogue's changes need. A portal session never has.
func (c *Console) mayAdminister(r *http.Request) (bool, error) {
	if isPortal(r) {
		return false, nil
	}
	_, err := c.sdk(r).Tokens.ListNewest(r.Context(), 1)
	err = sdkError(err)
	var ae *apiError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ae) && (ae.Status == http.StatusForbidden || ae.Status == http.StatusNotFound):
		return false, nil
	}
	return false, err
}

// refusedAccess reports the API's 403: the token may not do this at all.
func refusedAccess(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == http.StatusForbidden
}

// notOperator is what a token without admin access is told on the Topics
// pages.
const notOperator = "The catalogue is the operator's: creating, editing and deleting topics needs admin access or the master token. Your token reads it and may subscribe endpoints to its topics."

// forbiddenTopics is what the Topics pages tell who may not change them.
func forbiddenTopics(r *http.Request) string {
	if isPortal(r) {
		return notPortalOperator
	}
	return notOperator
}

type topicsData struct {
	Rows  []topicRow
	First bool
	// Next is the API's cursor of the next page, "" on the last.
	Next string
	// Admin shows the create form; Forbidden says why it is not shown.
	Admin     bool
	Forbidden string
	Form      topicForm
}

func (c *Console) topicsData(r *http.Request, d *topicsData) error {
	p := client.ListTopicsParams{Limit: client.Ptr(pageSize)}
	cur := r.URL.Query().Get("cursor")
	if cur != "" {
		p.Cursor = &cur
	}
	pg, err := c.sdk(r).Topics.List(r.Context(), p)
	if err = sdkError(err); err != nil {
		return err
	}
	d.First, d.Next = cur == "", pg.NextCursor
	for i := range pg.Items {
		d.Rows = append(d.Rows, toTopicRow(&pg.Items[i]))
	}
	admin, err := c.mayAdminister(r)
	if err != nil {
		return err
	}
	d.Admin = admin
	if !admin {
		d.Forbidden = forbiddenTopics(r)
	}
	return nil
}

func (c *Console) topicsPage(w http.ResponseWriter, r *http.Request, s *session) {
	d := topicsData{Form: newTopicForm()}
	if err := c.topicsData(r, &d); err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, "topics", http.StatusOK, view{Title: "Topics", Nav: "topics", Data: d})
}

// createTopic adds a topic and opens its page; the API's refusal is shown
// next to the field it names, what was typed kept.
func (c *Console) createTopic(w http.ResponseWriter, r *http.Request, s *session) {
	f, schema := readTopicForm(r)
	if len(f.Errors) == 0 {
		in := client.TopicRequest{Name: &f.Name}
		if f.Description != "" {
			in.Description = &f.Description
		}
		if schema != nil {
			raw := json.RawMessage(schema)
			in.Schema = &raw
		}
		t, err := c.sdk(r).Topics.Create(r.Context(), in)
		err = sdkError(err)
		switch {
		case err == nil:
			redirect(w, r, base(r)+"/topics/"+url.PathEscape(t.Name), "Topic created.")
			return
		case refusedAccess(err):
			// The form is not shown to this token: say so where it lands.
			c.answerFailure(w, r, s, err, redirectProblem, base(r)+"/topics", "Not created: ")
			return
		case !formErrors(err, topicFormFields, f.Errors, &f.General):
			c.fail(w, r, s, err)
			return
		}
	}
	d := topicsData{Form: f}
	if err := c.topicsData(r, &d); err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, "topics", http.StatusBadRequest, view{Title: "Topics", Nav: "topics", Data: d})
}

// subscriptionsShown is how many of the subscriptions naming a topic its
// page lists.
const subscriptionsShown = 50

// topicEventsShown is how many of the events that target a topic its page
// lists.
const topicEventsShown = 20

type topicData struct {
	Topic     topicRow
	Admin     bool
	Forbidden string
	Form      topicForm
	Subs      []subscriptionRow
	SubsMore  bool
	// Events are the newest of the events that target the topic (none in
	// the portal, which reads no events); EventsMore says more follow.
	Events     []eventLink
	EventsMore bool
}

func formFromTopic(t topicRow) topicForm {
	f := newTopicForm()
	f.Name, f.Description, f.Schema, f.Version = t.Name, t.Description, t.Schema, strconv.FormatInt(t.Version, 10)
	return f
}

func (c *Console) topicPage(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderTopicPage(w, r, s, nil, http.StatusOK)
}

// renderTopicPage renders the page of the topic named in the path; form,
// when set, is an edit the API refused (shown with its errors).
func (c *Console) renderTopicPage(w http.ResponseWriter, r *http.Request, s *session, form *topicForm, status int) {
	sdk, ctx := c.sdk(r), r.Context()
	t, err := sdk.Topics.Get(ctx, r.PathValue("name"))
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := topicData{Topic: toTopicRow(t)}
	d.Form = formFromTopic(d.Topic)
	if form != nil {
		d.Form = *form
	}
	if d.Admin, err = c.mayAdminister(r); err != nil {
		c.fail(w, r, s, err)
		return
	}
	if !d.Admin {
		d.Forbidden = forbiddenTopics(r)
	}
	page, err := sdk.Subscriptions.List(ctx, client.ListSubscriptionsParams{Topic: &t.Name,
		Limit: client.Ptr(subscriptionsShown)})
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.SubsMore = page.NextCursor != ""
	d.Subs = c.subscriptionRows(r, page.Items, nil)
	// The portal reads no events: its page leaves out those that target it.
	if !s.inPortal() {
		if d.Events, d.EventsMore, err = eventLinks(ctx, sdk, client.ListEventsParams{Topic: &t.Name,
			Limit: client.Ptr(topicEventsShown)}); err != nil {
			c.fail(w, r, s, err)
			return
		}
	}
	c.render(w, r, s, "topic", status, view{Title: t.Name, Nav: "topics", Data: d})
}

// updateTopic saves the edit form: only a changed description or schema
// is sent (an emptied schema box as null, which removes it), conditional
// on the version the form was read at.
func (c *Console) updateTopic(w http.ResponseWriter, r *http.Request, s *session) {
	name := r.PathValue("name")
	sdk, ctx := c.sdk(r), r.Context()
	stored, err := sdk.Topics.Get(ctx, name)
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	f, schema := readTopicForm(r)
	f.Name = stored.Name
	back := base(r) + "/topics/" + url.PathEscape(stored.Name)
	if len(f.Errors) > 0 {
		c.renderTopicPage(w, r, s, &f, http.StatusBadRequest)
		return
	}
	patch := map[string]any{}
	if f.Description != stored.Description {
		patch["description"] = f.Description
	}
	var was []byte
	if stored.Schema != nil && string(bytes.TrimSpace(*stored.Schema)) != "null" {
		var buf bytes.Buffer
		if json.Compact(&buf, *stored.Schema) == nil {
			was = buf.Bytes()
		}
	}
	switch {
	case schema == nil && was != nil:
		patch["schema"] = nil
	case schema != nil && !bytes.Equal(schema, was):
		patch["schema"] = json.RawMessage(schema)
	}
	if len(patch) == 0 {
		redirect(w, r, back, "Nothing changed.")
		return
	}
	var opts []client.CallOption
	if f.Version != "" {
		opts = append(opts, client.IfMatch(versionETag(stored.Name, f.Version)))
	}
	_, err = sdk.Topics.UpdateFields(ctx, stored.Name, patch, opts...)
	err = sdkError(err)
	var ae *apiError
	switch {
	case err == nil:
		redirect(w, r, back, "Topic saved.")
	case refusedAccess(err):
		c.answerFailure(w, r, s, err, redirectProblem, back, "Not saved: ")
	case errors.As(err, &ae) && ae.Status == http.StatusPreconditionFailed:
		f.General = "Someone changed this topic since you opened the form. Reload it to see their change."
		c.renderTopicPage(w, r, s, &f, http.StatusBadRequest)
	case formErrors(err, topicFormFields, f.Errors, &f.General):
		c.renderTopicPage(w, r, s, &f, http.StatusBadRequest)
	default:
		c.answerFailure(w, r, s, err, redirectProblem, back, "Not saved: ")
	}
}

func (c *Console) confirmDeleteTopic(w http.ResponseWriter, r *http.Request, s *session) {
	name := r.PathValue("name")
	back := base(r) + "/topics/" + url.PathEscape(name)
	c.render(w, r, s, "confirm", http.StatusOK, view{Title: "Delete topic", Nav: "topics", Data: confirmData{
		Action: "delete", Verb: "Delete", Danger: true, Name: name,
		Question: "Delete this topic from the catalogue? The API refuses while a subscription names it exactly or an event targets it.",
		Post:     back + "/delete", Cancel: back}})
}

func (c *Console) deleteTopic(w http.ResponseWriter, r *http.Request, s *session) {
	name := r.PathValue("name")
	if err := sdkError(c.sdk(r).Topics.Delete(r.Context(), name)); err != nil {
		// The API's own answer, e.g. "topic is in use: 2 subscriptions name it; …".
		c.answerFailure(w, r, s, err, redirectProblem, base(r)+"/topics/"+url.PathEscape(name), "Not deleted: ")
		return
	}
	redirect(w, r, base(r)+"/topics", "Topic deleted.")
}
