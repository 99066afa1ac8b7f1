package model_test

import (
	"strings"
	"testing"

	"github.com/qhronos/qhronos/internal/model"
)

func TestRunStatus(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 250)
	tests := []struct {
		outcome string
		code    int
		err     string
		want    string
	}{
		{"completed", 200, "", "completed (HTTP 200 OK)"},
		{"retrying", 503, "server error", "retrying (HTTP 503 Service Unavailable): server error"},
		{"failed", 599, "", "failed (HTTP 599 )"},
		{"retrying", 0, "send request: connection refused", "retrying: send request: connection refused"},
		{"failed", 0, long, "failed: " + long[:200] + "…"},
		{"completed", 0, "", "completed"},
	}
	for _, tt := range tests {
		if got := model.RunStatus(tt.outcome, tt.code, tt.err); got != tt.want {
			t.Errorf("RunStatus(%q, %d, %q) = %q, want %q", tt.outcome, tt.code, tt.err, got, tt.want)
		}
	}
}
