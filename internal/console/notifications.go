package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/qhronos/qhronos/client"
)

// noticeKinds are the notice kinds a channel may ask for, in the order the
// form lists them.
var noticeKinds = []string{"delivery_failed", "run_failed", "run_timed_out", "missed", "circuit_opened",
	"circuit_closed", "endpoint_disabled", "series_ended", "dependency_unreachable", "dependency_recovered"}

type channelRow struct {
	ID, Name, Type, URL string
	SecretSet           bool
	To, Kinds           []string
	// Tags scope the channel to the notices about events and endpoints
	// carrying one of them; empty takes every notice.
	Tags      []string
	CreatedBy string
	CreatedAt time.Time
}

func toChannelRow(ch *client.NotificationChannel) channelRow {
	row := channelRow{ID: ch.ID, Name: ch.Name, Type: string(ch.Type), SecretSet: ch.SecretSet, To: ch.To,
		Tags: ch.Tags, CreatedBy: ch.CreatedBy, CreatedAt: ch.CreatedAt}
	if ch.URL != nil {
		row.URL = *ch.URL
	}
	for _, k := range ch.Kinds {
		row.Kinds = append(row.Kinds, string(k))
	}
	return row
}

type channelForm struct {
	// Tags is comma-separated, as typed.
	Name, Type, URL, To, Tags string
	Kinds                     map[string]bool
	Errors                    map[string]string
	General                   string
}

// testResult is the answer of a test send, shown beside its channel.
type testResult struct {
	ID, Name  string
	Delivered bool
	Error     string
}

type notificationsData struct {
	Channels  []channelRow
	Forbidden string
	Form      channelForm
	AllKinds  []string
	// Created is the channel just created, with its webhook secret shown
	// once.
	Created       *channelRow
	CreatedSecret string
	Test          *testResult
}

func newChannelForm() channelForm {
	return channelForm{Type: "webhook", Kinds: map[string]bool{}, Errors: map[string]string{}}
}

// channelsData lists the channels; a token without admin access gets the
// reason instead.
func (c *Console) channelsData(r *http.Request, d *notificationsData) error {
	d.AllKinds = noticeKinds
	list, err := c.sdk(r).NotificationChannels.List(r.Context())
	err = sdkError(err)
	var ae *apiError
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusForbidden:
		d.Forbidden = "Your token cannot manage notification channels: that needs admin access or the master token."
		return nil
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		d.Forbidden = "This server has no notification channels API (notifications are off in its configuration)."
		return nil
	case err != nil:
		return err
	}
	for i := range list {
		d.Channels = append(d.Channels, toChannelRow(&list[i]))
	}
	return nil
}

func (c *Console) notificationsPage(w http.ResponseWriter, r *http.Request, s *session) {
	d := notificationsData{Form: newChannelForm()}
	if err := c.channelsData(r, &d); err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, "notifications", http.StatusOK, view{Title: "Notifications", Nav: "notifications", Data: d})
}

var channelFormFields = map[string]string{"name": "name", "type": "type", "url": "url", "to": "to", "kinds": "kinds",
	"tags": "tags"}

func (c *Console) createChannel(w http.ResponseWriter, r *http.Request, s *session) {
	f := newChannelForm()
	f.Name, f.Type = strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("type")
	f.URL, f.To = strings.TrimSpace(r.PostFormValue("url")), strings.TrimSpace(r.PostFormValue("to"))
	f.Tags = strings.TrimSpace(r.PostFormValue("tags"))
	in := client.NotificationChannelRequest{Name: &f.Name,
		Type: client.Ptr(client.NotificationChannelRequestType(f.Type)), Tags: splitTags(f.Tags)}
	_ = r.ParseForm()
	for _, k := range r.PostForm["kinds"] {
		f.Kinds[k] = true
		in.Kinds = append(in.Kinds, client.NotificationChannelRequestKinds(k))
	}
	switch f.Type {
	case "webhook":
		in.URL = &f.URL
	case "email":
		in.To = splitTags(strings.ReplaceAll(f.To, "\n", ","))
	}
	d := notificationsData{}
	status := http.StatusOK
	ch, err := c.sdk(r).NotificationChannels.Create(r.Context(), in)
	err = sdkError(err)
	switch {
	case err == nil:
		row := toChannelRow(ch)
		d.Created = &row
		if ch.Secret != nil {
			d.CreatedSecret = *ch.Secret
		}
		f = newChannelForm()
	case formErrors(err, channelFormFields, f.Errors, &f.General):
		status = http.StatusBadRequest
	default:
		c.fail(w, r, s, err)
		return
	}
	d.Form = f
	if err := c.channelsData(r, &d); err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, "notifications", status, view{Title: "Notifications", Nav: "notifications", Data: d})
}

// testChannel sends a test notice and shows the channel's answer.
func (c *Console) testChannel(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	sdk := c.sdk(r)
	res, err := sdk.NotificationChannels.Test(r.Context(), id)
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	test := &testResult{ID: id, Delivered: res.Delivered}
	if res.Error != nil {
		test.Error = *res.Error
	}
	if r.PostFormValue("back") == "channel" {
		// Sent from the channel's page: show the answer there, beside the
		// notice it just recorded.
		c.renderChannelPage(w, r, s, test, nil, http.StatusOK)
		return
	}
	d := notificationsData{Form: newChannelForm(), Test: test}
	if err := c.channelsData(r, &d); err != nil {
		c.fail(w, r, s, err)
		return
	}
	for _, ch := range d.Channels {
		if ch.ID == id {
			d.Test.Name = ch.Name
		}
	}
	c.render(w, r, s, "notifications", http.StatusOK, view{Title: "Notifications", Nav: "notifications", Data: d})
}

func (c *Console) confirmDeleteChannel(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	c.render(w, r, s, "confirm", http.StatusOK, view{Title: "Delete channel", Nav: "notifications", Data: confirmData{
		Action: "delete", Verb: "Delete", Danger: true, Question: "Delete this notification channel? Notices stop going to it.",
		Post: Prefix + "/notifications/" + url.PathEscape(id) + "/delete", Cancel: Prefix + "/notifications"}})
}

func (c *Console) deleteChannel(w http.ResponseWriter, r *http.Request, s *session) {
	err := sdkError(c.sdk(r).NotificationChannels.Delete(r.Context(), r.PathValue("id")))
	if err != nil {
		c.answerFailure(w, r, s, err, redirectProblem, Prefix+"/notifications", "Not deleted: ")
		return
	}
	redirect(w, r, Prefix+"/notifications", "Channel deleted.")
}
