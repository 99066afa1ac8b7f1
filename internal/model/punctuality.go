package model

import "time"

// PunctualityGroupBy is what a punctuality report groups instants by.
type PunctualityGroupBy string

const (
	PunctualityByEvent    PunctualityGroupBy = "event"
	PunctualityByEndpoint PunctualityGroupBy = "endpoint"
	PunctualityByTag      PunctualityGroupBy = "tag"
)

// MaxPunctualityWindow is the longest window a punctuality report covers.
const MaxPunctualityWindow = 366 * 24 * time.Hour

// PunctualityFilter selects a punctuality report: the instants scheduled in
// [From, To) (whole hours) of the events the principal may read.
type PunctualityFilter struct {
	From, To     time.Time
	Now          time.Time
	GroupBy      PunctualityGroupBy
	Tolerance    time.Duration
	Tags         []string // only events with one of these tags (none: all)
	Scope        []string
	Unrestricted bool
	// TrendStep is the width of the trend's points: an hour or a day.
	TrendStep time.Duration
	// Raw reads the history's rows instead of the rollups: the reference
	// the rollups are checked against.
	Raw bool
}

// PunctualityCounts is how the instants of a group went.
type PunctualityCounts struct {
	// Due counts the instants that have ended or are due by now.
	Due       int `json:"due"`
	OnTime    int `json:"on_time"`
	Late      int `json:"late"`
	Missed    int `json:"missed"`
	Skipped   int `json:"skipped"`
	Cancelled int `json:"cancelled"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	// Pending counts the due instants that have not ended (waiting,
	// retrying, in flight).
	Pending      int         `json:"pending"`
	LatenessMS   Percentiles `json:"lateness_ms"`
	SuccessRatio *float64    `json:"success_ratio"`
	OnTimeRatio  *float64    `json:"on_time_ratio"`
}

// PunctualityGroup is one group of a report: an event, an endpoint or a tag
// (Key nil: no endpoint, untagged).
type PunctualityGroup struct {
	Key  *string `json:"key"`
	Name string  `json:"name"`
	PunctualityCounts
}

// PunctualityPoint is one step of a report's trend.
type PunctualityPoint struct {
	Start time.Time `json:"start"`
	PunctualityCounts
}

// PunctualityReport answers GET /stats/punctuality.
type PunctualityReport struct {
	From        time.Time          `json:"from"`
	To          time.Time          `json:"to"`
	GroupBy     PunctualityGroupBy `json:"group_by"`
	ToleranceMS int64              `json:"tolerance_ms"`
	Total       PunctualityCounts  `json:"total"`
	Groups      []PunctualityGroup `json:"groups"`
	TrendStep   string             `json:"trend_step"`
	Trend       []PunctualityPoint `json:"trend"`
}
