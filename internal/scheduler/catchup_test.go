package scheduler

import (
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/model"
)

func TestCatchUpMiss(t *testing.T) {
	t.Parallel()
	now := time.Date(2031, 1, 1, 12, 0, 0, 0, time.UTC)
	c := ConfigFrom(config.Default(), "test").CatchUp // window 1 h, grace 1 min
	occ := func(ago time.Duration, attempts int, manual bool) *model.Occurrence {
		return &model.Occurrence{ScheduledAt: now.Add(-ago), AttemptCount: attempts, Manual: manual}
	}
	latest := now.Add(-10 * time.Minute)
	tests := []struct {
		name   string
		mode   string
		occ    *model.Occurrence
		want   bool
		reason string
	}{
		{"on time fires under none", CatchUpNone, occ(time.Second, 1, false), false, ""},
		{"within grace fires under none", CatchUpNone, occ(59*time.Second, 1, false), false, ""},
		{"overdue missed under none", CatchUpNone, occ(2*time.Minute, 1, false), true, model.ReasonCatchUpPolicy},
		{"overdue fires under all", CatchUpAll, occ(30*time.Minute, 1, false), false, ""},
		{"older than window missed under all", CatchUpAll, occ(61*time.Minute, 1, false), true, model.ReasonCatchUpWindow},
		{"older overdue missed under latest", CatchUpLatest, occ(20*time.Minute, 1, false), true, model.ReasonCatchUpPolicy},
		{"newest overdue fires under latest", CatchUpLatest, occ(10*time.Minute, 1, false), false, ""},
		{"retries are never overdue", CatchUpNone, occ(3*time.Hour, 2, false), false, ""},
		{"manual triggers are never overdue", CatchUpNone, occ(3*time.Hour, 1, true), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, reason, msg := c.Miss(tt.mode, tt.occ, now, latest)
			if got != tt.want || reason != tt.reason {
				t.Errorf("Miss(%s, %s late) = %v %s (%q), want %v %s", tt.mode, now.Sub(tt.occ.ScheduledAt), got, reason,
					msg, tt.want, tt.reason)
			}
		})
	}
}
