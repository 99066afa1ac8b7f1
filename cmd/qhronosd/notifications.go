package main

import (
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/metrics"
	"github.com/qhronos/qhronos/internal/notify"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/secrets"
)

// notifications is the operator notification stack: the notifier every
// service reports to, the leader's scanner of failures and ended series,
// this instance's dependency watcher, and the admin service of
// /notification-channels.
type notifications struct {
	notifier *notify.Notifier
	scanner  *notify.Scanner
	watcher  *notify.Watcher
	admin    *notify.Admin
}

func newNotifications(cfg *config.Config, store *repository.Store, coord coordination.Coordinator, box *secrets.Box,
	out outbound.Options, m *metrics.Metrics, now func() time.Time, instanceID string, log *zap.Logger) (*notifications, error) {
	n := cfg.Notifications
	channels, err := notify.ChannelsFromConfig(n.Channels)
	if err != nil {
		return nil, err
	}
	notifier := notify.New(notify.Deps{Channels: channels, Store: store, Box: box, HTTP: outbound.NewClient(out),
		SMTP: notify.SMTP{Addr: n.SMTP.Addr, Username: n.SMTP.Username, Password: n.SMTP.Password, From: n.SMTP.From,
			TLS: n.SMTP.TLS},
		DefaultSecret: cfg.HMAC.DefaultSecret, Now: now, Logger: log, Observer: m.Notices(noticeKinds()...),
		Recorder: store},
		notify.Options{DigestInterval: n.DigestInterval, MinInterval: n.MinInterval})
	deps := []notify.Dependency{{Name: "database", Ping: store.Ping}}
	if coord.Name() == "redis" {
		deps = append(deps, notify.Dependency{Name: "redis", Ping: coord.Ping})
	}
	return &notifications{
		notifier: notifier,
		scanner:  notify.NewScanner(store, notifier, coord, now, notify.ScannerConfig{Owner: instanceID, MissedAfter: n.MissedAfter}, log),
		watcher: notify.NewWatcher(deps, notifier, time.Now, notify.WatcherConfig{After: n.UnreachableAfter,
			Instance: instanceID}),
		admin: notify.NewAdmin(store, box, out, notifier, now),
	}, nil
}

func noticeKinds() []string {
	out := make([]string, len(notify.Kinds))
	for i, k := range notify.Kinds {
		out[i] = string(k)
	}
	return out
}
