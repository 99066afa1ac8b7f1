package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// recordedCheck is the result of reading back a sample of delivered
// occurrences: a delivery the server did not record as completed would be
// retried later, so a fast figure without recording is not a real one.
type recordedCheck struct {
	Checked   int            `json:"checked"`
	Completed int            `json:"completed"`
	Statuses  map[string]int `json:"statuses"`
	Errors    int            `json:"errors"`
}

// checkRecorded GETs /occurrences/{id} for every id and counts statuses.
func checkRecorded(ctx context.Context, client *http.Client, server *url.URL, token string, ids []string) recordedCheck {
	rc := recordedCheck{Statuses: map[string]int{}}
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		st, err := occurrenceStatus(ctx, client, server, token, id)
		rc.Checked++
		if err != nil {
			rc.Errors++
			continue
		}
		rc.Statuses[st]++
		if st == "completed" {
			rc.Completed++
		}
	}
	return rc
}

func occurrenceStatus(ctx context.Context, client *http.Client, server *url.URL, token, id string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, server.JoinPath("occurrences", id).String(), nil)
	if err != nil {
		return "", fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("get occurrence: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("read occurrence: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("get occurrence: status %d", resp.StatusCode)
	}
	var occ struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(raw, &occ); err != nil {
		return "", fmt.Errorf("decode occurrence: %w", err)
	}
	return occ.Status, nil
}
