package console

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

// calendarRow is a calendar as the list shows it.
type calendarRow struct {
	ID, Name, Timezone string
	Dates, Ranges      int
	RRules             []string
	Tags               []string
	ReplanPending      bool
	UpdatedAt          time.Time
}

func toCalendarRow(c *client.Calendar) calendarRow {
	return calendarRow{ID: c.ID, Name: c.Name, Timezone: c.Timezone, Dates: len(c.Dates), Ranges: len(c.Ranges),
		RRules: c.Rrules, Tags: c.Tags, ReplanPending: c.ReplanPending, UpdatedAt: c.UpdatedAt}
}

type calendarsData struct {
	Rows      []calendarRow
	NextQuery template.URL
}

func (c *Console) calendarsPage(w http.ResponseWriter, r *http.Request, s *session) {
	p := client.GetCalendarsParams{Limit: client.Ptr(pageSize)}
	if cur := r.URL.Query().Get("cursor"); cur != "" {
		p.Cursor = &cur
	}
	pg, err := c.sdk(r).Calendars.List(r.Context(), p)
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	var d calendarsData
	for i := range pg.Items {
		d.Rows = append(d.Rows, toCalendarRow(&pg.Items[i]))
	}
	if pg.NextCursor != "" {
		d.NextQuery = queryURL(url.Values{"cursor": {pg.NextCursor}})
	}
	c.render(w, r, s, "calendars", http.StatusOK, view{Title: "Calendars", Nav: "calendars", Data: d})
}

// calendarForm is the create/edit form as typed: one date, range or rule
// per line.
type calendarForm struct {
	ID, Version                          string
	Name, Timezone, Dates, Ranges, Rules string
	Tags                                 string
	Errors                               map[string]string
	General                              string
}

func (f calendarForm) Action() string {
	if f.ID == "" {
		return Prefix + "/calendars/new"
	}
	return Prefix + "/calendars/" + f.ID + "/edit"
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// calendarFormField maps the API's field names ("dates[2]", "ranges[0].to")
// to the form's textareas.
func calendarFormField(field string) string {
	name, _, _ := strings.Cut(field, "[")
	name, _, _ = strings.Cut(name, ".")
	switch name {
	case "name", "timezone", "dates", "ranges", "tags":
		return name
	case "rrules":
		return "rules"
	}
	return ""
}

func readCalendarForm(r *http.Request) (calendarForm, client.CalendarInput) {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	f := calendarForm{Name: v("name"), Timezone: v("timezone"), Dates: v("dates"), Ranges: v("ranges"),
		Rules: v("rules"), Tags: v("tags"), Version: v("version"), Errors: map[string]string{}}
	in := client.CalendarInput{Name: f.Name, Dates: lines(f.Dates), Rrules: lines(f.Rules), Tags: splitTags(f.Tags)}
	if f.Timezone != "" {
		in.Timezone = &f.Timezone
	}
	for i, l := range lines(f.Ranges) {
		from, to, ok := strings.Cut(strings.ReplaceAll(l, "..", " "), " ")
		from, to = strings.TrimSpace(from), strings.TrimSpace(to)
		if !ok || from == "" || to == "" {
			f.Errors["ranges"] = "line " + strconv.Itoa(i+1) + ": write a range as FROM..TO, e.g. 2026-12-24..2026-12-26"
			continue
		}
		in.Ranges = append(in.Ranges, client.DateRange{From: from, To: to})
	}
	return f, in
}

// calendarError shows a 4xx of the API next to its field or above the
// form; it reports false for any other error.
func calendarError(err error, f *calendarForm) bool {
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status < 400 || ae.Status > 499 || ae.Status == http.StatusNotFound {
		return false
	}
	if name := calendarFormField(ae.Field); name != "" {
		f.Errors[name] = ae.Message
	} else {
		f.General = ae.Message
	}
	return true
}

func (c *Console) newCalendarPage(w http.ResponseWriter, r *http.Request, s *session) {
	c.render(w, r, s, "calendar_form", http.StatusOK, view{Title: "New calendar", Nav: "calendars",
		Data: calendarForm{Timezone: "UTC", Errors: map[string]string{}}})
}

func (c *Console) createCalendar(w http.ResponseWriter, r *http.Request, s *session) {
	f, in := readCalendarForm(r)
	if len(f.Errors) == 0 {
		cal, err := c.sdk(r).Calendars.Create(r.Context(), in)
		err = sdkError(err)
		switch {
		case err == nil:
			redirect(w, r, Prefix+"/calendars/"+url.PathEscape(cal.ID), "Calendar created.")
			return
		case !calendarError(err, &f):
			c.fail(w, r, s, err)
			return
		}
	}
	c.render(w, r, s, "calendar_form", http.StatusBadRequest, view{Title: "New calendar", Nav: "calendars", Data: f})
}

func formFromCalendar(cal *client.Calendar) calendarForm {
	f := calendarForm{ID: cal.ID, Version: strconv.Itoa(cal.Version), Name: cal.Name, Timezone: cal.Timezone,
		Dates: strings.Join(cal.Dates, "\n"), Rules: strings.Join(cal.Rrules, "\n"), Tags: strings.Join(cal.Tags, ", "),
		Errors: map[string]string{}}
	var rs []string
	for _, rg := range cal.Ranges {
		rs = append(rs, rg.From+".."+rg.To)
	}
	f.Ranges = strings.Join(rs, "\n")
	return f
}

func (c *Console) editCalendarPage(w http.ResponseWriter, r *http.Request, s *session) {
	cal, err := c.sdk(r).Calendars.Get(r.Context(), r.PathValue("id"))
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, "calendar_form", http.StatusOK, view{Title: "Edit " + cal.Name, Nav: "calendars",
		Data: formFromCalendar(cal)})
}

// versionETag is the API's ETag of a calendar's or endpoint's version
// (internal/api's versionETag), so an edit made from a stale form is
// refused with 412 instead of overwriting someone else's change.
func versionETag(id, version string) string { return `"` + id + "-v" + version + `"` }

func (c *Console) updateCalendar(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	f, in := readCalendarForm(r)
	f.ID = id
	if len(f.Errors) == 0 {
		var opts []client.CallOption
		if f.Version != "" {
			opts = append(opts, client.IfMatch(versionETag(id, f.Version)))
		}
		_, err := c.sdk(r).Calendars.Update(r.Context(), id, in, opts...)
		err = sdkError(err)
		var ae *apiError
		switch {
		case err == nil:
			redirect(w, r, Prefix+"/calendars/"+url.PathEscape(id), "Calendar saved; the events using it are re-planned.")
			return
		case errors.As(err, &ae) && ae.Status == http.StatusPreconditionFailed:
			f.General = "Someone changed this calendar since you opened the form. Reload it to see their change."
		case !calendarError(err, &f):
			c.fail(w, r, s, err)
			return
		}
	}
	c.render(w, r, s, "calendar_form", http.StatusBadRequest, view{Title: "Edit calendar", Nav: "calendars", Data: f})
}

// monthView is one month of the next twelve, as weeks of days.
type monthView struct {
	Title   string
	Weeks   [][]dayCell
	Blocked int
}

type dayCell struct {
	Day     int // 0: padding outside the month
	Date    string
	Blocked bool
	Today   bool
}

// months lays out the twelve months from today's, marking the days the
// calendar blocks. It uses the planner's own compiled calendar, so the view
// shows exactly the days events skip or roll over.
func months(cal *client.Calendar, now time.Time) ([]monthView, error) {
	m := model.Calendar{ID: cal.ID, Name: cal.Name, Timezone: cal.Timezone, Dates: cal.Dates, RRules: cal.Rrules}
	for _, rg := range cal.Ranges {
		m.Ranges = append(m.Ranges, model.DateRange{From: rg.From, To: rg.To})
	}
	comp, err := calendar.Compile(m, recurrence.DefaultLimits())
	if err != nil {
		return nil, err
	}
	loc, err := time.LoadLocation(cal.Timezone)
	if err != nil {
		loc = time.UTC
	}
	today := now.In(loc)
	first := time.Date(today.Year(), today.Month(), 1, 12, 0, 0, 0, loc)
	out := make([]monthView, 0, 12)
	for i := range 12 {
		start := first.AddDate(0, i, 0)
		mv := monthView{Title: start.Format("January 2006")}
		// Weeks start on Monday; pad the first week.
		week := make([]dayCell, (int(start.Weekday())+6)%7)
		for d := start; d.Month() == start.Month(); d = d.AddDate(0, 0, 1) {
			cell := dayCell{Day: d.Day(), Date: d.Format("2006-01-02"), Blocked: comp.Blocks(d),
				Today: d.Year() == today.Year() && d.YearDay() == today.YearDay()}
			if cell.Blocked {
				mv.Blocked++
			}
			week = append(week, cell)
			if len(week) == 7 {
				mv.Weeks, week = append(mv.Weeks, week), nil
			}
		}
		if len(week) > 0 {
			mv.Weeks = append(mv.Weeks, append(week, make([]dayCell, 7-len(week))...))
		}
		out = append(out, mv)
	}
	return out, nil
}

type calendarData struct {
	Calendar      *client.Calendar
	Months        []monthView
	Blocked       int
	Events        []eventLink
	More          bool
	PendingTotal  int
	ReplanHealthy bool
	ReplanError   string
}

func (c *Console) calendarPage(w http.ResponseWriter, r *http.Request, s *session) {
	sdk, ctx := c.sdk(r), r.Context()
	cal, err := sdk.Calendars.Get(ctx, r.PathValue("id"))
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := calendarData{Calendar: cal, ReplanHealthy: true}
	if d.Months, err = months(cal, time.Now()); err != nil {
		c.fail(w, r, s, err)
		return
	}
	for _, m := range d.Months {
		d.Blocked += m.Blocked
	}
	if d.Events, d.More, err = eventLinks(ctx, sdk, client.ListEventsParams{CalendarID: &cal.ID,
		Limit: client.Ptr(usersShown)}); err != nil {
		c.fail(w, r, s, err)
		return
	}
	if cal.ReplanPending {
		// Re-plan progress is the instance's: how many calendars still wait
		// and whether the re-planner's last run failed.
		if st, err := sdk.Status(ctx); err == nil && st.Replans != nil {
			if n, ok := numberOf(st.Replans["pending_calendars"]); ok {
				d.PendingTotal = int(n)
			}
			if h, ok := st.Replans["healthy"].(bool); ok {
				d.ReplanHealthy = h
			}
			d.ReplanError, _ = st.Replans["error"].(string)
		}
	}
	c.render(w, r, s, "calendar", http.StatusOK, view{Title: cal.Name, Nav: "calendars", Data: d})
}

func (c *Console) confirmDeleteCalendar(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	back := Prefix + "/calendars/" + url.PathEscape(id)
	c.render(w, r, s, "confirm", http.StatusOK, view{Title: "Delete calendar", Nav: "calendars", Data: confirmData{
		Action: "delete", Verb: "Delete", Danger: true,
		Question: "Delete this calendar? The API refuses while an event uses it.", Post: back + "/delete", Cancel: back}})
}

func (c *Console) deleteCalendar(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	err := sdkError(c.sdk(r).Calendars.Delete(r.Context(), id))
	if err != nil {
		// The API's own answer, e.g. "calendar is used by 2 events; …".
		c.answerFailure(w, r, s, err, redirectProblem, Prefix+"/calendars/"+url.PathEscape(id), "Not deleted: ")
		return
	}
	redirect(w, r, Prefix+"/calendars", "Calendar deleted.")
}
