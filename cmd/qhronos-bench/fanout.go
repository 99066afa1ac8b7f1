package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// setupFanout prepares a fan-out run: a topic of its own, and n endpoints
// spread over the receivers' URLs, each subscribed to the topic (signing
// with --verify-signature's secret when it is set). It returns the topic.
func setupFanout(ctx context.Context, client *http.Client, server *url.URL, cfg Config, runID string, urls []string) (
	string, error) {
	topic := "qhronos-bench.run-" + runID
	if err := post(ctx, client, server, cfg.Token, "topics", map[string]any{"name": topic}, nil); err != nil {
		return "", fmt.Errorf("create topic: %w", err)
	}
	for i := range cfg.Subscribers {
		endpoint := map[string]any{"name": fmt.Sprintf("qhronos-bench %s #%d", runID, i), "url": urls[i%len(urls)]}
		if cfg.VerifySignature != "" {
			endpoint["secret"] = cfg.VerifySignature
		}
		var ep struct {
			ID string `json:"id"`
		}
		if err := post(ctx, client, server, cfg.Token, "endpoints", endpoint, &ep); err != nil {
			return "", fmt.Errorf("create endpoint %d: %w", i, err)
		}
		sub := map[string]any{"topic": topic, "endpoint_id": ep.ID}
		if err := post(ctx, client, server, cfg.Token, "subscriptions", sub, nil); err != nil {
			return "", fmt.Errorf("create subscription %d: %w", i, err)
		}
	}
	return topic, nil
}

// post sends one JSON POST to the API and decodes a 2xx answer into out.
func post(ctx context.Context, client *http.Client, server *url.URL, token, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, server.JoinPath(path).String(), bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return trimURLError(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("status %d: %s", resp.StatusCode, excerpt(raw, 160))
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}
