package calendar

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

// The product's limits on what a calendar holds.
const (
	MaxNameLength = 255
	MaxDates      = 1000
	MaxRanges     = 1000
	// MaxRangeDays bounds one range, both ends included (ten years).
	MaxRangeDays = 3660
	MaxRRules    = 20
	// MaxRRuleBytes bounds the text of one rule.
	MaxRRuleBytes = 1024
)

// Calendar members a client may send, and read-only ones it may send back
// (ignored, so GET → edit → PUT round trips work).
var (
	calendarFields   = input.Set("name", "timezone", "dates", "ranges", "rrules", "tags")
	calendarReadOnly = input.Set("id", "version", "created_by", "created_at", "updated_at", "replan_pending")
)

// Input is a decoded create or replace body of a calendar; absent and null
// members are empty (a PUT replaces the whole calendar).
type Input struct {
	Name     string
	Timezone string
	Dates    []string
	Ranges   []model.DateRange
	RRules   []string
	Tags     []string
}

// Decode reads a calendar body's members: their JSON types, not yet their
// rules (Validate checks those). Unknown members are a 400 naming them.
func Decode(members map[string]json.RawMessage) (*Input, error) {
	if _, ok := members[""]; ok {
		return nil, input.BadRequest("body", "has a member without a name")
	}
	if err := input.RejectUnknown(members, calendarFields, calendarReadOnly); err != nil {
		return nil, err
	}
	in := &Input{}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"name", &in.Name}, {"timezone", &in.Timezone}} {
		if raw, ok := members[f.name]; ok && !input.IsNull(raw) {
			if err := json.Unmarshal(raw, f.dst); err != nil {
				return nil, input.BadRequest(f.name, "must be a string")
			}
		}
	}
	for _, f := range []struct {
		name string
		dst  *[]string
	}{{"dates", &in.Dates}, {"rrules", &in.RRules}, {"tags", &in.Tags}} {
		if raw, ok := members[f.name]; ok && !input.IsNull(raw) {
			if err := json.Unmarshal(raw, f.dst); err != nil {
				return nil, input.BadRequest(f.name, "must be an array of strings")
			}
		}
	}
	if raw, ok := members["ranges"]; ok && !input.IsNull(raw) {
		if err := input.DecodeStrict(raw, "ranges", &in.Ranges); err != nil {
			return nil, input.BadRequest("ranges", `must be an array of {"from": "YYYY-MM-DD", "to": "YYYY-MM-DD"}`)
		}
	}
	return in, nil
}

// Validate checks in against the product's rules and returns the calendar
// it describes (without id, version, author or timestamps): dates sorted
// and unique, tags unique, the zone UTC when absent. Every error is a 400
// *input.Error naming the field ("dates[2]", "ranges[0].to", "rrules[1]").
func Validate(in *Input, limits recurrence.Limits) (model.Calendar, error) {
	var c model.Calendar
	name := strings.TrimSpace(in.Name)
	switch {
	case name == "":
		return c, input.BadRequest("name", "is required")
	case utf8.RuneCountInString(name) > MaxNameLength:
		return c, input.BadRequestf("name", "must be at most %d characters", MaxNameLength)
	case strings.ContainsRune(name, 0):
		return c, input.BadRequest("name", "must not contain NUL")
	}
	c.Name = name
	zone, err := checkZone(in.Timezone)
	if err != nil {
		return c, err
	}
	c.Timezone = zone
	if c.Dates, err = checkDates(in.Dates); err != nil {
		return c, err
	}
	if c.Ranges, err = checkRanges(in.Ranges); err != nil {
		return c, err
	}
	if c.RRules, err = checkRRules(in.RRules, zone, limits); err != nil {
		return c, err
	}
	if c.Tags, err = CheckTags(in.Tags); err != nil {
		return c, err
	}
	return c, nil
}

// checkZone accepts an IANA zone name; empty is UTC.
func checkZone(name string) (string, error) {
	if name == "" {
		return "UTC", nil
	}
	bad := input.BadRequest("timezone", "must be an IANA time zone name such as Europe/Prague")
	if len(name) > 64 || name == "Local" || strings.ContainsAny(name, " \\\x00") {
		return "", bad
	}
	if _, err := time.LoadLocation(name); err != nil {
		return "", bad
	}
	return name, nil
}

func checkDates(dates []string) ([]string, error) {
	if len(dates) > MaxDates {
		return nil, input.BadRequestf("dates", "at most %d dates", MaxDates)
	}
	for i, s := range dates {
		if _, ok := parseDay(s); !ok {
			return nil, input.BadRequestf(field("dates", i), "%q is not a date (YYYY-MM-DD)", clip(s))
		}
	}
	out := slices.Clone(dates)
	if out == nil {
		out = []string{}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func checkRanges(ranges []model.DateRange) ([]model.DateRange, error) {
	if len(ranges) > MaxRanges {
		return nil, input.BadRequestf("ranges", "at most %d ranges", MaxRanges)
	}
	for i, r := range ranges {
		f := field("ranges", i)
		from, ok := parseDay(r.From)
		if !ok {
			return nil, input.BadRequestf(f+".from", "%q is not a date (YYYY-MM-DD)", clip(r.From))
		}
		to, ok := parseDay(r.To)
		if !ok {
			return nil, input.BadRequestf(f+".to", "%q is not a date (YYYY-MM-DD)", clip(r.To))
		}
		if to < from {
			return nil, input.BadRequest(f+".to", "must not be before from")
		}
		if to-from+1 > MaxRangeDays {
			return nil, input.BadRequestf(f, "spans more than %d days", MaxRangeDays)
		}
	}
	if ranges == nil {
		return []model.DateRange{}, nil
	}
	return slices.Clone(ranges), nil
}

// checkRRules compiles every rule the way Compile does.
func checkRRules(rules []string, zone string, limits recurrence.Limits) ([]string, error) {
	if len(rules) > MaxRRules {
		return nil, input.BadRequestf("rrules", "at most %d rules", MaxRRules)
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, input.BadRequest("timezone", "must be an IANA time zone name such as Europe/Prague")
	}
	start := time.Date(ruleAnchor.y, ruleAnchor.m, ruleAnchor.d, ruleAnchor.h, 0, 0, 0, loc)
	for i, text := range rules {
		f := field("rrules", i)
		if strings.TrimSpace(text) == "" {
			return nil, input.BadRequest(f, "must not be empty")
		}
		if len(text) > MaxRRuleBytes {
			return nil, input.BadRequestf(f, "must be at most %d bytes", MaxRRuleBytes)
		}
		_, err := recurrence.Compile(recurrence.Spec{StartTime: start, Timezone: zone, RRule: text}, limits)
		var fe *recurrence.FieldError
		switch {
		case errors.As(err, &fe):
			return nil, input.BadRequest(f, fe.Reason)
		case err != nil:
			return nil, input.BadRequest(f, err.Error())
		}
	}
	if rules == nil {
		return []string{}, nil
	}
	return slices.Clone(rules), nil
}

// CheckTags applies the rules of an event's tags to a resource's (a
// calendar's, an endpoint's): it returns them without duplicates.
func CheckTags(tags []string) ([]string, error) {
	if len(tags) > events.MaxTags {
		return nil, input.BadRequestf("tags", "at most %d tags", events.MaxTags)
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		switch {
		case t == "" || strings.TrimSpace(t) != t:
			return nil, input.BadRequestf("tags", "tag %q must be non-empty without surrounding spaces", clip(t))
		case utf8.RuneCountInString(t) > events.MaxTagLength:
			return nil, input.BadRequestf("tags", "tags must be at most %d characters", events.MaxTagLength)
		case strings.ContainsAny(t, ",\x00\r\n"):
			return nil, input.BadRequestf("tags", "tag %q must not contain commas or control characters", clip(t))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func field(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

// clip shortens a value echoed in an error message.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	cut := 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
