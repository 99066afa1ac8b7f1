package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/qhronos/qhronos/client"
)

// noticesShown is how many of a channel's recent notices its page lists.
const noticesShown = 25

// noticeView is one sent notice as the channel page shows it.
type noticeView struct {
	At                             time.Time
	Kind, Summary, Outcome, Answer string
	Test                           bool
}

type channelData struct {
	Channel     channelRow
	Form        channelForm
	AllKinds    []string
	Test        *testResult
	Notices     []noticeView
	NoticesMore bool
}

// formFromChannel fills the edit form with the channel as stored.
func formFromChannel(ch channelRow) channelForm {
	f := newChannelForm()
	f.Name, f.Type, f.URL, f.To = ch.Name, ch.Type, ch.URL, strings.Join(ch.To, ", ")
	f.Tags = strings.Join(ch.Tags, ", ")
	for _, k := range ch.Kinds {
		f.Kinds[k] = true
	}
	return f
}

// channelPage shows a channel: its settings, an edit form, a test button
// and the notices recently sent to it.
func (c *Console) channelPage(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderChannelPage(w, r, s, nil, nil, http.StatusOK)
}

// renderChannelPage renders the page of the channel named in the path;
// form, when set, is an edit the API refused (shown with its errors).
func (c *Console) renderChannelPage(w http.ResponseWriter, r *http.Request, s *session, test *testResult,
	form *channelForm, status int) {
	sdk, ctx := c.sdk(r), r.Context()
	ch, err := sdk.NotificationChannels.Get(ctx, r.PathValue("id"))
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := channelData{Channel: toChannelRow(ch), AllKinds: noticeKinds, Test: test}
	d.Form = formFromChannel(d.Channel)
	if form != nil {
		d.Form = *form
	}
	page, err := sdk.NotificationChannels.Notices(ctx, ch.ID, client.NoticesParams{Limit: client.Ptr(noticesShown)})
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.NoticesMore = page.NextCursor != ""
	for _, n := range page.Items {
		d.Notices = append(d.Notices, noticeView{At: n.At, Kind: n.Kind, Summary: n.Summary,
			Outcome: string(n.Outcome), Answer: n.Answer, Test: n.Test})
	}
	c.render(w, r, s, "notification", status, view{Title: ch.Name, Nav: "notifications", Data: d})
}

// updateChannel saves the edit form: only the members the form changed go
// in the PATCH, so a concurrent change to another member is kept and the
// webhook's secret is never touched. It sends raw members: an empty list
// (no kind ticked, no tags) must reach the API to clear one.
func (c *Console) updateChannel(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	sdk, ctx := c.sdk(r), r.Context()
	stored, err := sdk.NotificationChannels.Get(ctx, id)
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	was := toChannelRow(stored)
	_ = r.ParseForm()
	f := newChannelForm()
	f.Type = was.Type
	f.Name, f.URL, f.To = strings.TrimSpace(r.PostFormValue("name")), strings.TrimSpace(r.PostFormValue("url")),
		strings.TrimSpace(r.PostFormValue("to"))
	f.Tags = strings.TrimSpace(r.PostFormValue("tags"))
	kinds := []string{}
	for _, k := range r.PostForm["kinds"] {
		f.Kinds[k] = true
		kinds = append(kinds, k)
	}
	in := map[string]any{}
	if f.Name != was.Name {
		in["name"] = f.Name
	}
	if was.Type == "webhook" && f.URL != was.URL {
		in["url"] = f.URL
	}
	if to := splitTags(strings.ReplaceAll(f.To, "\n", ",")); was.Type == "email" && !slices.Equal(to, was.To) {
		if to == nil {
			to = []string{} // the API names the field: at least one address
		}
		in["to"] = to
	}
	slices.Sort(kinds)
	if !slices.Equal(kinds, slices.Sorted(slices.Values(was.Kinds))) {
		in["kinds"] = kinds
	}
	if tags := splitTags(f.Tags); !slices.Equal(tags, was.Tags) {
		if tags == nil {
			tags = []string{}
		}
		in["tags"] = tags
	}
	back := Prefix + "/notifications/" + url.PathEscape(id)
	if len(in) == 0 {
		redirect(w, r, back, "Nothing changed.")
		return
	}
	_, err = sdk.NotificationChannels.UpdateFields(ctx, id, in)
	err = sdkError(err)
	switch {
	case err == nil:
		redirect(w, r, back, "Channel saved.")
	case formErrors(err, channelFormFields, f.Errors, &f.General):
		c.renderChannelPage(w, r, s, nil, &f, http.StatusBadRequest)
	default:
		c.answerFailure(w, r, s, err, redirectProblem, back, "Not saved: ")
	}
}
