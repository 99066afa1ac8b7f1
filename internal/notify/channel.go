package notify

import (
	"fmt"
	"slices"

	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/secrets"
)

// Channel is where notices go, as the notifier holds it: secrets in the
// clear, in memory only.
type Channel struct {
	// ID is the stored channel's id, or "config:<name>" for a channel of
	// the configuration.
	ID   string
	Name string
	Type string // model.ChannelWebhook or model.ChannelEmail
	URL  string
	// Secret signs a webhook's notices; empty uses the default secret.
	Secret string
	To     []string
	// Kinds filters notices; empty wants them all.
	Kinds []Kind
	// Tags scope the channel to notices about resources carrying one of
	// them; empty takes every notice.
	Tags []string
}

// String keeps the secret out of logs.
func (c Channel) String() string { return fmt.Sprintf("%s channel %q", c.Type, c.Name) }

// GoString keeps the secret out of %#v output.
func (c Channel) GoString() string { return c.String() }

// Wants reports whether the channel takes notices of kind k.
func (c Channel) Wants(k Kind) bool {
	if len(c.Kinds) == 0 || k == Test {
		return true
	}
	for _, want := range c.Kinds {
		if want == k {
			return true
		}
	}
	return false
}

// Takes reports whether the channel receives n: it wants n's kind and,
// when scoped by tags, n is about a resource carrying one of them.
func (c Channel) Takes(n Notice) bool {
	if !c.Wants(n.Kind) {
		return false
	}
	if len(c.Tags) == 0 || n.Kind == Test {
		return true
	}
	for _, t := range n.Tags {
		if slices.Contains(c.Tags, t) {
			return true
		}
	}
	return false
}

// ChannelsFromConfig turns the configured channels into Channels; an
// unknown kind is an error naming its key.
func ChannelsFromConfig(list []config.NotificationChannel) ([]Channel, error) {
	out := make([]Channel, 0, len(list))
	for i, c := range list {
		kinds, err := ParseKinds(fmt.Sprintf("notifications.channels[%d].kinds", i), c.Kinds)
		if err != nil {
			return nil, err
		}
		out = append(out, Channel{ID: "config:" + c.Name, Name: c.Name, Type: c.Type, URL: c.URL,
			Secret: c.Secret, To: append([]string(nil), c.To...), Kinds: kinds, Tags: slices.Clone(c.Tags)})
	}
	return out, nil
}

// openChannel turns a stored channel into a Channel, opening its sealed
// secret.
func openChannel(box *secrets.Box, c model.NotificationChannel) (Channel, error) {
	ch := Channel{ID: c.ID, Name: c.Name, Type: c.Type, URL: c.URL, To: append([]string(nil), c.To...),
		Tags: slices.Clone(c.Tags)}
	for _, k := range c.Kinds {
		ch.Kinds = append(ch.Kinds, Kind(k))
	}
	if len(c.Secret) > 0 {
		if box == nil {
			return Channel{}, fmt.Errorf("open secret of notification channel %s: no encryption key", c.ID)
		}
		plain, err := box.Open(c.Secret)
		if err != nil {
			return Channel{}, fmt.Errorf("open secret of notification channel %s: %w", c.ID, err)
		}
		ch.Secret = string(plain)
	}
	return ch, nil
}
