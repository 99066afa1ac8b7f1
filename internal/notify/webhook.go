package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/redact"
)

// webhookPayload is the body of a webhook notice, in the Standard Webhooks
// shape: type, timestamp and data.
type webhookPayload struct {
	Type      Kind      `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      any       `json:"data"`
}

// webhookSender POSTs notices to an operator URL, signed exactly like
// deliveries, through the outbound-guarded client, retrying transient
// failures with a doubling backoff.
type webhookSender struct {
	client        *http.Client
	defaultSecret string
	attempts      int
	backoff       time.Duration
	// now stamps the signature: receivers compare it with their wall clock.
	now func() time.Time
}

// errPermanent marks an answer a retry will not change.
var errPermanent = errors.New("permanent")

// send answers the receiver's status ("HTTP 204") when it took the notice.
func (w *webhookSender) send(ctx context.Context, ch Channel, m message) (string, error) {
	body, err := json.Marshal(webhookPayload{Type: m.Kind, Timestamp: m.At, Data: m.Data})
	if err != nil {
		return "", fmt.Errorf("encode notice: %w", err)
	}
	secret := ch.Secret
	if secret == "" {
		secret = w.defaultSecret
	}
	var secrets []string
	if secret != "" {
		secrets = []string{secret}
	}
	delay := w.backoff
	for attempt := 1; ; attempt++ {
		var status int
		status, err = w.post(ctx, ch.URL, secrets, m.ID, body)
		if err == nil {
			return fmt.Sprintf("HTTP %d", status), nil
		}
		if errors.Is(err, errPermanent) || attempt >= w.attempts {
			return "", err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("%w (gave up: %w)", err, ctx.Err())
		case <-t.C:
		}
		delay *= 2
	}
}

func (w *webhookSender) post(ctx context.Context, url string, secrets []string, id string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("%w: build request: %w", errPermanent, redact.URLError(err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Qhronos-Notifications")
	actions.SignHeaders(req.Header, secrets, id, w.now(), body)
	res, err := w.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("post notice: %w", redact.URLError(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	_ = res.Body.Close()
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return res.StatusCode, nil
	case res.StatusCode == http.StatusRequestTimeout || res.StatusCode == http.StatusTooManyRequests ||
		res.StatusCode >= 500:
		return res.StatusCode, fmt.Errorf("post notice: HTTP %d", res.StatusCode)
	default:
		return res.StatusCode, fmt.Errorf("%w: post notice: HTTP %d", errPermanent, res.StatusCode)
	}
}
