package model

import (
	"net/http"
	"strconv"
)

// RunStatus is an event's last_status after an attempt: its outcome, the
// HTTP status when there was one, and the error (cut at 200 bytes), e.g.
// "retrying (HTTP 503 Service Unavailable): server error". The scheduler
// writes it after a delivery, and the repository rebuilds it from the
// attempt's row when it repairs bookkeeping a crash forgot.
func RunStatus(outcome string, statusCode int, errMsg string) string {
	s := outcome
	if statusCode != 0 {
		// Concatenated, not formatted: it is written for every delivery.
		s += " (HTTP " + strconv.Itoa(statusCode) + " " + http.StatusText(statusCode) + ")"
	}
	if errMsg != "" {
		if len(errMsg) > 200 {
			errMsg = errMsg[:200] + "…"
		}
		s += ": " + errMsg
	}
	return s
}
