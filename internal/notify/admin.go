package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/redact"
	"github.com/qhronos/qhronos/internal/secrets"
)

// AdminStore keeps the channels managed through the API.
type AdminStore interface {
	ChannelStore
	CreateNotificationChannel(ctx context.Context, c *model.NotificationChannel) error
	GetNotificationChannel(ctx context.Context, id string) (model.NotificationChannel, error)
	UpdateNotificationChannel(ctx context.Context, c *model.NotificationChannel) error
	DeleteNotificationChannel(ctx context.Context, id string) error
	ListNotices(ctx context.Context, channelID string, before *model.PageCursor, limit int) ([]model.SentNotice, error)
}

// Admin manages the stored channels for /notification-channels: it
// validates input (errors name the field), seals webhook secrets, checks
// URLs against the outbound policy and keeps the notifier's channels
// current.
type Admin struct {
	store    AdminStore
	box      *secrets.Box
	redact   *redact.Redactor
	policy   outbound.Options
	notifier *Notifier
	now      func() time.Time
}

// NewAdmin builds the admin service; policy is the outbound policy channel
// URLs must pass.
func NewAdmin(store AdminStore, box *secrets.Box, policy outbound.Options, n *Notifier, now func() time.Time) *Admin {
	if now == nil {
		now = time.Now
	}
	return &Admin{store: store, box: box, redact: box.Redactor(), policy: policy, notifier: n, now: now}
}

// Limits of channel input.
const (
	maxChannelName  = 100
	maxRecipients   = 50
	minSecretLength = 16
	maxSecretLength = 256
)

var channelFields = input.Set("name", "type", "url", "secret", "to", "kinds", "tags")

// readOnlyChannelFields may be sent back from an answer; they are ignored.
var readOnlyChannelFields = input.Set("id", "secret_set", "created_by", "created_at", "updated_at")

// channelInput is the decoded body of a create or an update; nil members
// were absent.
type channelInput struct {
	name, typ, url, secret *string
	to, kinds, tags        *[]string
}

func decodeChannel(members map[string]json.RawMessage) (channelInput, error) {
	var in channelInput
	if err := input.RejectUnknown(members, channelFields, readOnlyChannelFields); err != nil {
		return in, err
	}
	for name, dst := range map[string]**string{"name": &in.name, "type": &in.typ, "url": &in.url,
		"secret": &in.secret} {
		var v string
		if ok, err := input.DecodeField(members, name, &v); err != nil {
			return in, err
		} else if ok {
			*dst = &v
		}
	}
	for name, dst := range map[string]**[]string{"to": &in.to, "kinds": &in.kinds, "tags": &in.tags} {
		var v []string
		if ok, err := input.DecodeField(members, name, &v); err != nil {
			return in, err
		} else if ok {
			*dst = &v
		}
	}
	return in, nil
}

// apply validates in and writes it onto c; secret is the plaintext to seal
// (generated for a webhook created without one).
func (a *Admin) apply(c *model.NotificationChannel, in channelInput, creating bool) (secret string, err error) {
	if in.name != nil {
		c.Name = strings.TrimSpace(*in.name)
	}
	if c.Name == "" || len(c.Name) > maxChannelName {
		return "", input.BadRequestf("name", "is required (at most %d characters)", maxChannelName)
	}
	if in.typ != nil {
		if !creating && *in.typ != c.Type {
			return "", input.BadRequest("type", "cannot change; create a new channel instead")
		}
		c.Type = *in.typ
	}
	if in.kinds != nil {
		if _, err := ParseKinds("kinds", *in.kinds); err != nil {
			var ke *KindError
			errors.As(err, &ke)
			return "", input.BadRequest(ke.Field, fmt.Sprintf("unknown notice kind %q", ke.Got))
		}
		c.Kinds = append([]string{}, *in.kinds...)
	}
	if in.tags != nil {
		tags, err := calendar.CheckTags(*in.tags)
		if err != nil {
			return "", err
		}
		c.Tags = tags
	}
	switch c.Type {
	case model.ChannelWebhook:
		if in.to != nil && len(*in.to) > 0 {
			return "", input.BadRequest("to", "is for email channels only")
		}
		if in.url != nil {
			// Answers show the URL as redact.SecretURL: sent back so, it
			// keeps the stored one; its fingerprint under a new host is
			// refused, the URL must then be given in full.
			u, err := a.redact.RestoreSecretURL("url", strings.TrimSpace(*in.url), c.URL)
			if err != nil {
				var re *redact.RestoreError
				if errors.As(err, &re) {
					return "", input.BadRequest(re.Field, re.Reason())
				}
				return "", err
			}
			c.URL = u
		}
		if err := outbound.CheckURL(c.URL, a.policy); err != nil {
			return "", input.BadRequest("url", err.Error())
		}
		if in.secret != nil {
			secret = *in.secret
			if len(secret) < minSecretLength || len(secret) > maxSecretLength {
				return "", input.BadRequestf("secret", "must be %d to %d characters", minSecretLength, maxSecretLength)
			}
		} else if creating {
			if secret, err = secrets.GenerateSecret(); err != nil {
				return "", err
			}
		}
	case model.ChannelEmail:
		if in.url != nil && *in.url != "" {
			return "", input.BadRequest("url", "is for webhook channels only")
		}
		if in.secret != nil {
			return "", input.BadRequest("secret", "is for webhook channels only")
		}
		if in.to != nil {
			c.To = *in.to
		}
		if len(c.To) == 0 || len(c.To) > maxRecipients {
			return "", input.BadRequestf("to", "must list 1 to %d email addresses", maxRecipients)
		}
		for i, to := range c.To {
			addr, err := mail.ParseAddress(to)
			if err != nil || addr.Name != "" {
				return "", input.BadRequest(fmt.Sprintf("to[%d]", i), "must be an email address such as ops@example.com")
			}
		}
	default:
		return "", input.BadRequest("type", `must be "webhook" or "email"`)
	}
	if c.Kinds == nil {
		c.Kinds = []string{}
	}
	if c.Tags == nil {
		c.Tags = []string{}
	}
	if c.To == nil {
		c.To = []string{}
	}
	return secret, nil
}

// Create stores a channel from an API body. A webhook's secret is returned
// once, here (generated whsec_… when the body has none).
func (a *Admin) Create(ctx context.Context, by string, members map[string]json.RawMessage) (model.NotificationChannel, string, error) {
	in, err := decodeChannel(members)
	if err != nil {
		return model.NotificationChannel{}, "", err
	}
	now := a.now().UTC()
	c := model.NotificationChannel{ID: model.NewID(), CreatedBy: by, CreatedAt: now, UpdatedAt: now}
	secret, err := a.apply(&c, in, true)
	if err != nil {
		return model.NotificationChannel{}, "", err
	}
	if err := a.seal(&c, secret); err != nil {
		return model.NotificationChannel{}, "", err
	}
	if err := a.store.CreateNotificationChannel(ctx, &c); err != nil {
		return model.NotificationChannel{}, "", nameTaken(err)
	}
	a.reload(ctx)
	return c, secret, nil
}

// Get returns one stored channel.
func (a *Admin) Get(ctx context.Context, id string) (model.NotificationChannel, error) {
	return a.store.GetNotificationChannel(ctx, id)
}

// List returns every stored channel.
func (a *Admin) List(ctx context.Context) ([]model.NotificationChannel, error) {
	return a.store.ListNotificationChannels(ctx)
}

// Update changes the members present in the body (a merge patch; the type
// is fixed).
func (a *Admin) Update(ctx context.Context, id string, members map[string]json.RawMessage) (model.NotificationChannel, error) {
	in, err := decodeChannel(members)
	if err != nil {
		return model.NotificationChannel{}, err
	}
	c, err := a.store.GetNotificationChannel(ctx, id)
	if err != nil {
		return model.NotificationChannel{}, err
	}
	secret, err := a.apply(&c, in, false)
	if err != nil {
		return model.NotificationChannel{}, err
	}
	if secret != "" {
		if err := a.seal(&c, secret); err != nil {
			return model.NotificationChannel{}, err
		}
	}
	c.UpdatedAt = a.now().UTC()
	if err := a.store.UpdateNotificationChannel(ctx, &c); err != nil {
		return model.NotificationChannel{}, nameTaken(err)
	}
	a.reload(ctx)
	return c, nil
}

// Delete removes a stored channel.
func (a *Admin) Delete(ctx context.Context, id string) error {
	if err := a.store.DeleteNotificationChannel(ctx, id); err != nil {
		return err
	}
	a.reload(ctx)
	return nil
}

// Test sends a test notice to a stored channel now; the error is the
// channel's failure (nil when it was delivered). err is for the look-up.
func (a *Admin) Test(ctx context.Context, id, by string) (sendErr error, err error) {
	c, err := a.store.GetNotificationChannel(ctx, id)
	if err != nil {
		return nil, err
	}
	ch, err := openChannel(a.box, c)
	if err != nil {
		return nil, err
	}
	return a.notifier.SendTest(ctx, ch, by), nil
}

// Notices returns a page of the notices sent to a stored channel, newest
// first; ErrNotFound for an unknown channel.
func (a *Admin) Notices(ctx context.Context, id string, before *model.PageCursor, limit int) ([]model.SentNotice, error) {
	c, err := a.store.GetNotificationChannel(ctx, id)
	if err != nil {
		return nil, err
	}
	return a.store.ListNotices(ctx, c.ID, before, limit)
}

func (a *Admin) seal(c *model.NotificationChannel, secret string) error {
	if secret == "" {
		c.Secret = nil
		return nil
	}
	sealed, err := a.box.Seal([]byte(secret))
	if err != nil {
		return fmt.Errorf("seal channel secret: %w", err)
	}
	c.Secret = sealed
	return nil
}

// reload brings the change to the notifier now; when the database fails
// here, its periodic refresh does it later.
func (a *Admin) reload(ctx context.Context) {
	if a.notifier != nil {
		_ = a.notifier.Reload(ctx)
	}
}

func nameTaken(err error) error {
	if errors.Is(err, model.ErrConflict) {
		return &input.Error{Status: http.StatusConflict, Message: "name: another channel has this name", Field: "name"}
	}
	return err
}
