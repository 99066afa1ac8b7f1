package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNotificationChannelsFromYAMLAndEnvironment(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`notifications:
  channels:
    - name: ops
      type: webhook
      url: https://ops.example.com/hook
      secret: whsec_c2VjcmV0
      kinds: [circuit_opened]
    - {name: oncall, type: email, to: [oncall@example.com]}
  smtp: {addr: "mail.example.com:587", from: qhronos@example.com, password: hunter2-password}
`), 0o600))
	cfg, warnings, err := Load([]string{"--config", path}, envOf(nil))
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.NoError(t, cfg.Validate())
	require.Equal(t, []NotificationChannel{
		{Name: "ops", Type: "webhook", URL: "https://ops.example.com/hook", Secret: "whsec_c2VjcmV0",
			Kinds: []string{"circuit_opened"}},
		{Name: "oncall", Type: "email", To: []string{"oncall@example.com"}},
	}, cfg.Notifications.Channels)

	for _, printed := range []string{
		strings.Join([]string{cfg.Notifications.Channels[0].String(), cfg.Notifications.SMTP.String()}, " "),
	} {
		if strings.Contains(printed, "whsec_c2VjcmV0") || strings.Contains(printed, "hunter2") {
			t.Errorf("a secret is printed: %s", printed)
		}
	}

	env := envOf(map[string]string{"QHRONOS_NOTIFICATIONS_CHANNELS": `[{"name":"e","type":"email","to":["a@example.com"]}]`})
	cfg, _, err = Load(nil, env)
	require.NoError(t, err)
	require.Equal(t, []NotificationChannel{{Name: "e", Type: "email", To: []string{"a@example.com"}}},
		cfg.Notifications.Channels)
}

func TestNotificationChannelsRefuseUnknownMembers(t *testing.T) {
	t.Parallel()
	_, _, err := Load(nil, envOf(map[string]string{"QHRONOS_NOTIFICATIONS_CHANNELS": `[{"name":"e","tpye":"email"}]`}))
	require.Error(t, err)
	require.Contains(t, err.Error(), "notifications.channels")
	require.Contains(t, err.Error(), "tpye")
}

func TestNotificationValidationNamesTheKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(*NotificationsConfig)
		key  string
	}{
		{"no type", func(n *NotificationsConfig) { n.Channels = []NotificationChannel{{Name: "a"}} },
			"notifications.channels[0].type"},
		{"webhook without url", func(n *NotificationsConfig) {
			n.Channels = []NotificationChannel{{Name: "a", Type: "webhook", URL: "ftp://x"}}
		}, "notifications.channels[0].url"},
		{"bad address", func(n *NotificationsConfig) {
			n.Channels = []NotificationChannel{{Name: "a", Type: "email", To: []string{"nobody"}}}
		}, "notifications.channels[0].to[0]"},
		{"email without smtp", func(n *NotificationsConfig) {
			n.Channels = []NotificationChannel{{Name: "a", Type: "email", To: []string{"a@example.com"}}}
		}, "notifications.smtp.addr"},
		{"duplicate name", func(n *NotificationsConfig) {
			n.Channels = []NotificationChannel{{Name: "a", Type: "webhook", URL: "https://x.example"},
				{Name: "a", Type: "webhook", URL: "https://y.example"}}
		}, "notifications.channels[1].name"},
		{"tls", func(n *NotificationsConfig) { n.SMTP.TLS = "ssl" }, "notifications.smtp.tls"},
		{"digest", func(n *NotificationsConfig) { n.DigestInterval = 0 }, "notifications.digest_interval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := Default()
			c.edit(&cfg.Notifications)
			err := cfg.Validate()
			require.Error(t, err)
			require.Contains(t, err.Error(), c.key+":")
		})
	}
}
