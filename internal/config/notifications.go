package config

import (
	"bytes"
	"fmt"
	"net/mail"
	"net/url"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// NotificationsConfig sends operators notices (circuit opened or closed,
// endpoint disabled, failed deliveries, ended series, unreachable
// dependencies) through webhook and email channels. Channels created
// through /notification-channels join the ones listed here.
type NotificationsConfig struct {
	// Channels are the operator channels defined here; in the environment,
	// a JSON array of the same objects.
	Channels []NotificationChannel `yaml:"channels"`
	SMTP     SMTPConfig            `yaml:"smtp"`
	// DigestInterval collects failed deliveries into one notice per channel
	// and interval.
	DigestInterval time.Duration `yaml:"digest_interval"`
	// MinInterval sends the same notice (kind and endpoint or event) at most
	// once per interval, so a flapping circuit cannot flood a mailbox.
	MinInterval time.Duration `yaml:"min_interval"`
	// UnreachableAfter is how long the database or Redis must be
	// unreachable before operators hear of it.
	UnreachableAfter time.Duration `yaml:"unreachable_after"`
	// MissedAfter is how long past its instant an occurrence may still be
	// waiting before its event's `missed` notice goes out.
	MissedAfter time.Duration `yaml:"missed_after"`
}

// NotificationChannel is one operator channel: a signed webhook or email.
type NotificationChannel struct {
	Name string `yaml:"name" json:"name"`
	// Type is webhook or email.
	Type string `yaml:"type" json:"type"`
	// URL receives a webhook channel's notices.
	URL string `yaml:"url" json:"url"`
	// Secret signs a webhook channel's notices (Standard Webhooks); empty
	// means hmac.default_secret.
	Secret string `yaml:"secret" json:"secret"`
	// To lists an email channel's recipients.
	To []string `yaml:"to" json:"to"`
	// Kinds are the notice kinds wanted; empty means all.
	Kinds []string `yaml:"kinds" json:"kinds"`
	// Tags scope the channel to notices about events and endpoints that
	// carry one of them; empty means every notice.
	Tags []string `yaml:"tags" json:"tags"`
}

// String keeps the secret out of logs and error messages.
func (c NotificationChannel) String() string {
	return fmt.Sprintf("notification channel %q (%s)", c.Name, c.Type)
}

// GoString keeps the secret out of %#v output.
func (c NotificationChannel) GoString() string { return c.String() }

// SMTPConfig is the mail server email channels send through.
type SMTPConfig struct {
	// Addr is host:port of the mail server.
	Addr     string `yaml:"addr"`
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// From is the sender address.
	From string `yaml:"from"`
	// TLS is starttls (required), tls (implicit, port 465) or none (no TLS
	// required; STARTTLS is still used when the server offers it).
	TLS string `yaml:"tls"`
}

// String keeps the password out of logs and error messages.
func (c SMTPConfig) String() string { return fmt.Sprintf("smtp %s (tls %s)", c.Addr, c.TLS) }

// GoString keeps the password out of %#v output.
func (c SMTPConfig) GoString() string { return c.String() }

// Channel types.
const (
	ChannelWebhook = "webhook"
	ChannelEmail   = "email"
)

var channelsType = reflect.TypeFor[[]NotificationChannel]()

// setChannels decodes a list of channels from YAML (a JSON array is YAML
// too), refusing unknown members; an empty list is nil, the default.
func setChannels(dst reflect.Value, path string, doc []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	var list []NotificationChannel
	if err := dec.Decode(&list); err != nil {
		return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(list) == 0 {
		list = nil
	}
	dst.Set(reflect.ValueOf(list))
	return nil
}

func (c *Config) validateNotifications(v *validator) {
	n := c.Notifications
	v.positiveDuration("notifications.digest_interval", n.DigestInterval)
	v.nonNegativeDuration("notifications.min_interval", n.MinInterval)
	v.positiveDuration("notifications.unreachable_after", n.UnreachableAfter)
	v.positiveDuration("notifications.missed_after", n.MissedAfter)
	v.oneOf("notifications.smtp.tls", n.SMTP.TLS, "starttls", "tls", "none")
	names := map[string]bool{}
	email := false
	for i, ch := range n.Channels {
		p := fmt.Sprintf("notifications.channels[%d]", i)
		name := strings.TrimSpace(ch.Name)
		v.check(name != "" && len(name) <= 100, p+".name", "is required (at most 100 characters)")
		v.check(!names[name], p+".name", fmt.Sprintf("%q is used by another channel", name))
		names[name] = true
		switch ch.Type {
		case ChannelWebhook:
			u, err := url.Parse(ch.URL)
			v.check(err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "", p+".url",
				"must be an http:// or https:// URL")
			v.check(len(ch.To) == 0, p+".to", "is for email channels only")
		case ChannelEmail:
			email = true
			v.check(len(ch.To) > 0, p+".to", "must list at least one address")
			for j, to := range ch.To {
				_, err := mail.ParseAddress(to)
				v.check(err == nil, fmt.Sprintf("%s.to[%d]", p, j), "must be an email address")
			}
			v.check(ch.URL == "" && ch.Secret == "", p+".url", "url and secret are for webhook channels only")
		default:
			v.check(false, p+".type", fmt.Sprintf("must be webhook or email, got %q", ch.Type))
		}
		for j, tag := range ch.Tags {
			v.check(tag != "" && strings.TrimSpace(tag) == tag, fmt.Sprintf("%s.tags[%d]", p, j),
				"must be a non-empty tag without surrounding spaces")
		}
	}
	if email {
		v.addr("notifications.smtp.addr", n.SMTP.Addr)
		_, err := mail.ParseAddress(n.SMTP.From)
		v.check(err == nil, "notifications.smtp.from", "must be an email address when an email channel is set")
	}
}
