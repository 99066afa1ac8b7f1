package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/receiver"
)

// listener forwards WebSocket deliveries to a local URL.
type listener struct {
	a          *app
	c          *client.Client
	sub        client.Subscription
	forwardTo  string
	secret     string
	http       *http.Client
	maxBackoff time.Duration
}

func newListenCmd(a *app) *cobra.Command {
	var l listener
	var clientName string
	var tags []string
	var all bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "listen --forward-to URL (--client NAME | --tags a,b | --all)",
		Short: "Receive deliveries over WebSocket and forward them to a local receiver",
		Long: `listen connects to the server's /ws as a client-hook (--client) or a tag-listener (--tags, or
--all: every event the token may read, tagged or not) and
POSTs every delivery to --forward-to with the body and headers a webhook would carry,
signatures included, so a receiver on your machine gets them with no public URL.

Client-hook deliveries are signed by the server with the event's secret. When the event asks
for an acknowledgement (--require-ack on create), listen acknowledges a delivery only when
the local answer is 2xx; otherwise the occurrence stays pending and is retried by its policy.
Tag-listener frames carry no signature (the delivery belongs to another destination): give
--secret (or QHRONOS_WEBHOOK_SECRET) to sign them yourself.

listen reconnects with backoff when the connection drops; while it is away, occurrences for
the client wait and retry. One line is printed per delivery (one JSON object with -o json).`,
		Example: `  qhronos listen --client dev --forward-to http://localhost:3000/hooks
  qhronos events create --name try --start "in 10 seconds" --client dev --require-ack
  qhronos listen --tags billing --forward-to http://localhost:3000/hooks --secret "$SECRET"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := url.Parse(l.forwardTo)
			if l.forwardTo == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usagef("--forward-to: required, an http(s) URL such as http://localhost:3000/hooks")
			}
			given := 0
			for _, set := range []bool{clientName != "", len(tags) > 0, all} {
				if set {
					given++
				}
			}
			if given != 1 {
				return usagef("--client, --tags or --all: give exactly one")
			}
			if l.secret == "" {
				l.secret = a.getenv("QHRONOS_WEBHOOK_SECRET")
			}
			l.a, l.sub = a, client.Subscription{ClientName: clientName, Tags: tags, All: all}
			l.http = &http.Client{Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			}}
			if l.c, err = a.client(); err != nil {
				return err
			}
			return l.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&l.forwardTo, "forward-to", "", "local URL that receives each delivery")
	f.StringVar(&clientName, "client", "", "subscribe as a client-hook of this client name")
	f.StringSliceVar(&tags, "tags", nil, "subscribe as a tag-listener of these tags")
	f.BoolVar(&all, "all", false, "subscribe as a tag-listener of every event the token may read, tagged or not")
	f.StringVar(&l.secret, "secret", "", "sign tag-listener deliveries with this secret (env QHRONOS_WEBHOOK_SECRET)")
	f.DurationVar(&timeout, "timeout", 10*time.Second, "how long the local receiver may take")
	f.DurationVar(&l.maxBackoff, "max-backoff", 30*time.Second, "longest wait between reconnections")
	return cmd
}

// run connects, forwards and reconnects until ctx ends.
func (l *listener) run(ctx context.Context) error {
	backoff := 250 * time.Millisecond
	what := "client-hook " + l.sub.ClientName
	switch {
	case l.sub.All:
		what = "listener of every event"
	case l.sub.ClientName == "":
		what = "tag-listener " + strings.Join(l.sub.Tags, ",")
	}
	for {
		conn, err := l.c.Subscribe(ctx, l.sub)
		if ctx.Err() != nil {
			return nil
		}
		var refused *client.HandshakeError
		var apiErr *client.APIError
		switch {
		case errors.As(err, &refused):
			return fmt.Errorf("subscribe as %s: %s", what, refused.Message)
		case errors.As(err, &apiErr) && apiErr.StatusCode < 500:
			return fmt.Errorf("subscribe as %s: %w", what, err)
		case err != nil:
			l.status("connect to %s failed: %v; retrying in %s", l.c.BaseURL(), err, backoff)
			if !sleep(ctx, backoff) {
				return nil
			}
			backoff = min(2*backoff, l.maxBackoff)
			continue
		}
		backoff = 250 * time.Millisecond
		l.status("listening as %s on %s, forwarding to %s", what, l.c.BaseURL(), l.forwardTo)
		err = l.serve(ctx, conn)
		_ = conn.Close()
		if ctx.Err() != nil {
			return nil
		}
		l.status("connection lost (%v); reconnecting", err)
	}
}

// serve handles frames until the connection ends.
func (l *listener) serve(ctx context.Context, conn *client.Conn) error {
	for {
		f, err := conn.Next(ctx)
		if err != nil {
			return err
		}
		switch f.Type {
		case "event":
			l.forward(ctx, conn, f)
		case "error":
			l.status("server: %s", f.Message)
		}
	}
}

// delivery is one line of listen's output.
type delivery struct {
	Time         time.Time `json:"time"`
	OccurrenceID string    `json:"occurrence_id"`
	EventID      string    `json:"event_id"`
	Name         string    `json:"name"`
	Attempt      int       `json:"attempt"`
	StatusCode   int       `json:"status_code,omitempty"`
	DurationMS   int64     `json:"duration_ms"`
	Error        string    `json:"error,omitempty"`
	Acked        bool      `json:"acked"`
	Signed       bool      `json:"signed"`
}

func (l *listener) forward(ctx context.Context, conn *client.Conn, f client.Frame) {
	body, header := l.request(f)
	d := delivery{Time: time.Now().UTC(), OccurrenceID: f.OccurrenceID, EventID: f.EventID, Name: f.Name,
		Attempt: f.Attempt, Signed: header.Get(receiver.HeaderWebhookSignature) != ""}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.forwardTo, bytes.NewReader(body))
	if err == nil {
		req.Header = header
		var res *http.Response
		began := time.Now()
		res, err = l.http.Do(req)
		d.DurationMS = time.Since(began).Milliseconds()
		if err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
			_ = res.Body.Close()
			d.StatusCode = res.StatusCode
		}
	}
	ok := err == nil && d.StatusCode >= 200 && d.StatusCode <= 299
	switch {
	case err != nil:
		d.Error = err.Error()
	case !ok:
		d.Error = fmt.Sprintf("receiver answered %d", d.StatusCode)
	}
	if ok && f.RequireAck && l.sub.ClientName != "" {
		if aerr := conn.Ack(ctx, f); aerr != nil {
			d.Error = "ack: " + aerr.Error()
		} else {
			d.Acked = true
		}
	}
	l.a.renderDelivery(d, f.RequireAck)
}

// request is what a webhook would carry: the server-signed request of a
// client-hook frame, or for a tag-listener frame the webhook body rebuilt
// from the frame, signed with --secret when given.
func (l *listener) request(f client.Frame) ([]byte, http.Header) {
	h := http.Header{}
	if f.Webhook != nil {
		for k, v := range f.Webhook.Headers {
			h.Set(k, v)
		}
		return []byte(f.Webhook.Body), h
	}
	meta := f.Metadata
	if len(meta) == 0 || string(meta) == "null" {
		meta = json.RawMessage(`{}`)
	}
	tags := f.Tags
	if tags == nil {
		tags = []string{}
	}
	body, _ := json.Marshal(receiver.Delivery{EventID: f.EventID, OccurrenceID: f.OccurrenceID, Attempt: f.Attempt,
		Name: f.Name, Description: f.Description, ScheduledAt: f.ScheduledAt, DispatchedAt: time.Now().UTC(),
		Metadata: meta, Tags: tags})
	var secrets []string
	if l.secret != "" {
		secrets = []string{l.secret}
	}
	h = receiver.Sign(secrets, f.OccurrenceID, time.Now(), body)
	h.Set("Content-Type", "application/json")
	return body, h
}

// status reports the connection's state on stderr (stdout has deliveries).
func (l *listener) status(format string, args ...any) {
	fmt.Fprintf(l.a.stderr, "qhronos listen: "+format+"\n", args...)
}

// sleep waits d unless ctx ends first (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
