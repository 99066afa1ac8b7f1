package recurrence

import "time"

// Spec is an event's timing as the API receives it. At most one of RRule,
// Schedule and Cron is set; none means a one-time event at StartTime.
type Spec struct {
	// StartTime is DTSTART for rrule and schedule, the instant of a one-time
	// event, the base of "@every", and an optional inclusive lower bound for
	// cron (zero means none).
	StartTime time.Time
	// Timezone is an IANA name; empty means UTC.
	Timezone string
	RRule    string
	Schedule *Schedule
	Cron     string
	// DST is the event's policy for local times that do not exist or occur
	// twice; the zero value keeps each source's documented default.
	DST DST
}

// Schedule is the Qhronos schedule object (JSON, snake_case). It maps onto
// an RRULE whose DTSTART is the event's start_time; it is not a second engine.
type Schedule struct {
	Frequency  string      `json:"frequency"`
	Interval   int         `json:"interval,omitempty"`
	ByDay      []string    `json:"by_day,omitempty"`
	ByMonthDay []int       `json:"by_month_day,omitempty"`
	ByMonth    []int       `json:"by_month,omitempty"`
	ByHour     []int       `json:"by_hour,omitempty"`
	ByMinute   []int       `json:"by_minute,omitempty"`
	BySetPos   []int       `json:"by_set_pos,omitempty"`
	Count      *int        `json:"count,omitempty"`
	Until      *time.Time  `json:"until,omitempty"`
	Exdates    []time.Time `json:"exdates,omitempty"`
}
