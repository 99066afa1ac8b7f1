package receiver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// HeaderRunToken carries the run token on every delivery of a callback
// event's occurrence (webhooks, API calls and broker messages alike); the
// payload's run.token is the same token.
const HeaderRunToken = "Qhronos-Run-Token"

// RunStatus is how the receiver says its run ended.
type RunStatus string

// The two ends of a run.
const (
	RunSucceeded RunStatus = "succeeded" // the occurrence completes
	RunFailed    RunStatus = "failed"    // the occurrence fails
)

// ErrRunOver is Qhronos's answer (409) to a report or heartbeat for a run
// that is no longer under way: it ended with another report, timed out or
// was cancelled. Its outcome is decided; the work can stop.
var ErrRunOver = errors.New("the run is not under way")

// runHTTPClient sends Complete and Heartbeat when RunInfo.HTTPClient is
// nil; the timeout keeps a stalled connection from holding a job forever.
var runHTTPClient = &http.Client{Timeout: 30 * time.Second}

// errNoRun is calling Complete or Heartbeat on the nil Run of a delivery
// whose event completes by response.
var errNoRun = errors.New("the delivery starts no run: its event completes by response")

// RunInfo is the "run" of a delivery of an event that completes by
// callback (its completion is "callback"). The receiver answers the
// delivery 2xx at once, which starts the run (the occurrence is running),
// does the work, and reports how it ended with Complete. A run with neither
// a report nor a Heartbeat before Deadline ends timed_out.
//
// Every delivery of the occurrence, re-sends included, carries the same
// token and URLs.
type RunInfo struct {
	// Token authenticates Complete and Heartbeat for this occurrence's run
	// and nothing else. It is a bearer credential: keep it out of logs.
	Token        string    `json:"token"`
	CompleteURL  string    `json:"complete_url"`
	HeartbeatURL string    `json:"heartbeat_url"`
	Deadline     time.Time `json:"deadline"`

	// HTTPClient sends Complete and Heartbeat; nil is a client with a 30 s
	// timeout.
	HTTPClient *http.Client `json:"-"`
}

// Complete reports how the run ended: RunSucceeded completes the
// occurrence, RunFailed fails it. output is any value encoding/json
// encodes, at most 16 KB once encoded (a json.RawMessage is sent as it is;
// nil sends none); Qhronos keeps it, redacted, as the occurrence's
// run.output.
//
// The same report again is accepted as the first was, so Complete is safe
// to repeat after a network error. A different report after the run ended,
// or any report after it timed out, is ErrRunOver.
func (r *RunInfo) Complete(ctx context.Context, status RunStatus, output any) error {
	body := struct {
		Status RunStatus `json:"status"`
		Output any       `json:"output,omitempty"`
	}{status, output}
	if r == nil {
		return errNoRun
	}
	_, err := r.post(ctx, "complete", r.CompleteURL, body)
	return err
}

// Heartbeat says the work goes on: Qhronos moves the run's deadline to now
// plus the event's max_runtime, and Heartbeat returns the new deadline.
// ErrRunOver means the run ended (it timed out, say) and the work can stop.
func (r *RunInfo) Heartbeat(ctx context.Context) (time.Time, error) {
	if r == nil {
		return time.Time{}, errNoRun
	}
	occ, err := r.post(ctx, "heartbeat", r.HeartbeatURL, nil)
	if err != nil {
		return time.Time{}, err
	}
	if occ.Run == nil || occ.Run.Deadline == nil {
		return time.Time{}, errors.New("heartbeat: the answer has no run deadline")
	}
	return *occ.Run.Deadline, nil
}

// runAnswer is the part of the occurrence Qhronos answers with that the
// kit reads.
type runAnswer struct {
	Run *struct {
		Deadline *time.Time `json:"deadline"`
	} `json:"run"`
}

// post sends body (none when nil) to url with the run token and decodes
// the occurrence Qhronos answers; what names the call in errors.
func (r *RunInfo) post(ctx context.Context, what, url string, body any) (runAnswer, error) {
	var out runAnswer
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return out, fmt.Errorf("%s: encode the report: %w", what, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, rd)
	if err != nil {
		return out, fmt.Errorf("%s: %w", what, err)
	}
	req.Header.Set("Authorization", "Bearer "+r.Token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := r.HTTPClient
	if hc == nil {
		hc = runHTTPClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return out, fmt.Errorf("%s: %w", what, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return out, fmt.Errorf("%s: read the answer: %w", what, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Error == "" {
			e.Error = http.StatusText(res.StatusCode)
		}
		if res.StatusCode == http.StatusConflict {
			return out, fmt.Errorf("%s: %w: %s", what, ErrRunOver, e.Error)
		}
		return out, fmt.Errorf("%s: Qhronos answered %d: %s", what, res.StatusCode, e.Error)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("%s: decode the answer: %w", what, err)
	}
	return out, nil
}
