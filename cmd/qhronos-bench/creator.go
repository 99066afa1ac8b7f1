package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// creator creates one-time webhook events through POST /events.
type creator struct {
	client *http.Client
	server *url.URL
	token  string
	tags   []string
	runID  string
	now    func() time.Time
	// lead is the least time left before an instant for its event to still be
	// sent; later ones are skipped, because the server would refuse a start
	// time in the past and the measurement would be wrong anyway.
	lead time.Duration
	// topic, when set, is what every event targets instead of a webhook.
	topic string
}

// createResult is what creating a plan produced.
type createResult struct {
	Created  int
	Failed   int
	Skipped  int
	Start    time.Time
	End      time.Time
	Latency  Summary
	Failures map[string]int // "status 400: …" → count
}

// eventRequest is the original Qhronos create body: the legacy webhook
// field keeps the bench usable against the original server too.
type eventRequest struct {
	Name      string   `json:"name"`
	StartTime string   `json:"start_time"`
	Webhook   string   `json:"webhook,omitempty"`
	Topic     string   `json:"topic,omitempty"`
	Tags      []string `json:"tags"`
}

// createAll creates an event per instant, concurrency at a time, in instant
// order, sending event i to urls[i % len(urls)]; onCreated gets each new
// event id. progress counts created events for the caller's progress line.
func (c *creator) createAll(ctx context.Context, instants []time.Time, urls []string, concurrency int,
	onCreated func(id string), progress *atomic.Int64) createResult {
	var (
		next    atomic.Int64
		mu      sync.Mutex
		wg      sync.WaitGroup
		res     = createResult{Failures: map[string]int{}, Start: c.now()}
		latency = make([]time.Duration, 0, len(instants))
	)
	for range concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(instants) || ctx.Err() != nil {
					return
				}
				if c.now().Add(c.lead).After(instants[i]) {
					mu.Lock()
					res.Skipped++
					mu.Unlock()
					continue
				}
				t0 := c.now()
				id, err := c.create(ctx, i, instants[i], urls[i%len(urls)])
				d := c.now().Sub(t0)
				mu.Lock()
				if err != nil {
					res.Failed++
					res.Failures[err.Error()]++
				} else {
					res.Created++
					latency = append(latency, d)
				}
				mu.Unlock()
				if err == nil {
					onCreated(id)
					progress.Add(1)
				}
			}
		})
	}
	wg.Wait()
	res.End = c.now()
	res.Latency = summarize(latency)
	return res
}

// create sends one POST /events and returns the new event's id.
func (c *creator) create(ctx context.Context, i int, at time.Time, hook string) (string, error) {
	body, err := json.Marshal(eventRequest{
		Name:      fmt.Sprintf("qhronos-bench %s #%d", c.runID, i),
		StartTime: at.UTC().Format(time.RFC3339Nano),
		Tags:      c.tags,
	}.to(hook, c.topic))
	if err != nil {
		return "", fmt.Errorf("encode event: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.server.JoinPath("events").String(),
		bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("post /events: %w", trimURLError(err))
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("read create answer: %w", err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, excerpt(raw, 160))
	}
	var ev struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil || ev.ID == "" {
		return "", fmt.Errorf("status %d without an event id: %s", resp.StatusCode, excerpt(raw, 160))
	}
	return ev.ID, nil
}

// excerpt returns at most n bytes of b on one line, for error messages.
func excerpt(b []byte, n int) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// trimURLError drops the URL from a *url.Error so identical failures group
// under one message.
func trimURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// to sends the event to hook, or to topic's subscribers when topic is set.
func (r eventRequest) to(hook, topic string) eventRequest {
	if topic != "" {
		r.Topic = topic
	} else {
		r.Webhook = hook
	}
	return r
}
