package console

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

var weekdays = map[string]string{"MO": "Monday", "TU": "Tuesday", "WE": "Wednesday", "TH": "Thursday",
	"FR": "Friday", "SA": "Saturday", "SU": "Sunday"}

var units = map[string]string{"SECONDLY": "second", "MINUTELY": "minute", "HOURLY": "hour", "DAILY": "day",
	"WEEKLY": "week", "MONTHLY": "month", "YEARLY": "year"}

// describeRule says a schedule in words; the rule text itself is always
// shown next to it, so anything this does not cover stays visible.
func describeRule(kind, rule string, start time.Time, zone string) string {
	if zone == "" {
		zone = "UTC"
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc = time.UTC
	}
	switch kind {
	case "once":
		return "Once, at " + start.In(loc).Format(timeLayout) + " (" + zone + ")"
	case "cron":
		return describeCron(rule) + " (" + zone + ")"
	case "schedule":
		return describeSchedule(rule) + " (" + zone + ")"
	case "rrule":
		return describeRRule(rule, start.In(loc)) + " (" + zone + ")"
	}
	return rule
}

func describeRRule(rule string, start time.Time) string {
	parts := map[string]string{}
	for _, p := range strings.Split(strings.TrimPrefix(strings.ToUpper(rule), "RRULE:"), ";") {
		if k, v, ok := strings.Cut(p, "="); ok {
			parts[k] = v
		}
	}
	unit, ok := units[parts["FREQ"]]
	if !ok {
		return "Repeats: " + rule
	}
	words := "Every " + unit
	if n, err := strconv.Atoi(parts["INTERVAL"]); err == nil && n > 1 {
		words = fmt.Sprintf("Every %d %ss", n, unit)
	}
	if days := parts["BYDAY"]; days != "" {
		var names []string
		for _, d := range strings.Split(days, ",") {
			prefix := strings.TrimRight(d, "MOTUWEHFRSA")
			if name, ok := weekdays[strings.TrimPrefix(d, prefix)]; ok {
				if prefix != "" {
					name = ordinal(prefix) + " " + name
				}
				names = append(names, name)
			} else {
				names = append(names, d)
			}
		}
		words += " on " + list(names)
	}
	if md := parts["BYMONTHDAY"]; md != "" {
		words += " on day " + strings.ReplaceAll(md, ",", ", ") + " of the month"
	}
	hours, minutes := parts["BYHOUR"], parts["BYMINUTE"]
	switch {
	case hours != "" && !strings.Contains(hours, ","):
		m := minutes
		if m == "" || strings.Contains(m, ",") {
			m = strconv.Itoa(start.Minute())
		}
		h, _ := strconv.Atoi(hours)
		mi, _ := strconv.Atoi(m)
		words += fmt.Sprintf(" at %02d:%02d", h, mi)
	case hours != "":
		words += " at hours " + strings.ReplaceAll(hours, ",", ", ")
	case parts["FREQ"] == "DAILY" || parts["FREQ"] == "WEEKLY" || parts["FREQ"] == "MONTHLY" || parts["FREQ"] == "YEARLY":
		words += " at " + start.Format("15:04")
	}
	if c := parts["COUNT"]; c != "" {
		words += ", " + c + " times"
	}
	if u := parts["UNTIL"]; u != "" {
		words += ", until " + u
	}
	return words
}

func ordinal(p string) string {
	switch p {
	case "1", "+1":
		return "first"
	case "2", "+2":
		return "second"
	case "3", "+3":
		return "third"
	case "4", "+4":
		return "fourth"
	case "-1":
		return "last"
	}
	return p
}

func list(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func describeCron(expr string) string {
	switch strings.TrimSpace(expr) {
	case "@yearly", "@annually":
		return "Once a year"
	case "@monthly":
		return "Once a month"
	case "@weekly":
		return "Once a week"
	case "@daily", "@midnight":
		return "Every day at midnight"
	case "@hourly":
		return "Every hour"
	}
	if d, ok := strings.CutPrefix(strings.TrimSpace(expr), "@every "); ok {
		return "Every " + d
	}
	f := strings.Fields(expr)
	if len(f) != 5 {
		return "Cron " + expr
	}
	minute, hour, dom, month, dow := f[0], f[1], f[2], f[3], f[4]
	simple := func(s string) bool { _, err := strconv.Atoi(s); return err == nil }
	if simple(minute) && simple(hour) && month == "*" {
		h, _ := strconv.Atoi(hour)
		m, _ := strconv.Atoi(minute)
		at := fmt.Sprintf("%02d:%02d", h, m)
		switch {
		case dom == "*" && dow == "*":
			return "Every day at " + at
		case dom == "*":
			return "At " + at + " on weekdays " + dow + " (cron numbering, 0 = Sunday)"
		case dow == "*":
			return "At " + at + " on day " + dom + " of the month"
		}
	}
	if minute == "*" && hour == "*" && dom == "*" && month == "*" && dow == "*" {
		return "Every minute"
	}
	if every, ok := strings.CutPrefix(minute, "*/"); ok && hour == "*" && dom == "*" && month == "*" && dow == "*" {
		return "Every " + every + " minutes"
	}
	return "Cron " + expr
}

func describeSchedule(raw string) string {
	var s struct {
		Frequency  string   `json:"frequency"`
		Interval   int      `json:"interval"`
		ByDay      []string `json:"by_day"`
		ByMonthDay []int    `json:"by_month_day"`
		ByHour     []int    `json:"by_hour"`
		ByMinute   []int    `json:"by_minute"`
		Count      int      `json:"count"`
		Until      string   `json:"until"`
	}
	if json.Unmarshal([]byte(raw), &s) != nil || s.Frequency == "" {
		return "Schedule " + raw
	}
	rule := "FREQ=" + strings.ToUpper(s.Frequency)
	if s.Interval > 1 {
		rule += ";INTERVAL=" + strconv.Itoa(s.Interval)
	}
	if len(s.ByDay) > 0 {
		rule += ";BYDAY=" + strings.ToUpper(strings.Join(s.ByDay, ","))
	}
	ints := func(xs []int) string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = strconv.Itoa(x)
		}
		return strings.Join(out, ",")
	}
	if len(s.ByMonthDay) > 0 {
		rule += ";BYMONTHDAY=" + ints(s.ByMonthDay)
	}
	if len(s.ByHour) > 0 {
		rule += ";BYHOUR=" + ints(s.ByHour)
	}
	if len(s.ByMinute) > 0 {
		rule += ";BYMINUTE=" + ints(s.ByMinute)
	}
	if s.Count > 0 {
		rule += ";COUNT=" + strconv.Itoa(s.Count)
	}
	return describeRRule(rule, time.Time{})
}
