package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newCalendarsCmd(a *app) *cobra.Command {
	cmd := group("calendars", "Manage exclusion calendars: days on which the events that honour them do not fire",
		newCalendarsCreateCmd(a), newCalendarsListCmd(a), newCalendarsGetCmd(a), newCalendarsUpdateCmd(a),
		newCalendarsDeleteCmd(a))
	cmd.Aliases = []string{"calendar", "cal"}
	cmd.Example = `  qhronos calendars create --name weekends --rrule "FREQ=WEEKLY;BYDAY=SA,SU" --tag billing
  qhronos calendars create --name holidays --timezone Europe/Prague --date 2030-12-24 --range 2030-12-27..2030-12-31
  qhronos events update 3f2b… -f event.json   # with "calendars": [{"id": "…", "policy": "roll_forward"}]`
	return cmd
}

// calendarFlags are the members of a calendar as flags.
type calendarFlags struct {
	name, timezone       string
	dates, ranges, rules []string
	tags                 []string
}

func (f *calendarFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.name, "name", "", "the calendar's name (required)")
	fs.StringVar(&f.timezone, "timezone", "", "IANA zone its days are read in (default UTC)")
	fs.StringArrayVar(&f.dates, "date", nil, "a blocked day, YYYY-MM-DD (repeatable)")
	fs.StringArrayVar(&f.ranges, "range", nil, "blocked days FROM..TO, inclusive (repeatable)")
	fs.StringArrayVar(&f.rules, "rrule", nil, `an all-day RRULE whose days are blocked, e.g. "FREQ=WEEKLY;BYDAY=SA,SU" (repeatable)`)
	fs.StringArrayVar(&f.tags, "tag", nil, "a tag scoping the calendar like an event (repeatable)")
}

func (f *calendarFlags) input() (client.CalendarInput, error) {
	in := client.CalendarInput{Name: f.name, Dates: f.dates, Rrules: f.rules, Tags: f.tags}
	if f.name == "" {
		return in, usagef("--name is required")
	}
	if f.timezone != "" {
		in.Timezone = &f.timezone
	}
	for _, r := range f.ranges {
		from, to, ok := strings.Cut(r, "..")
		if !ok {
			return in, usagef("--range %q: use FROM..TO, e.g. 2030-12-27..2030-12-31", r)
		}
		in.Ranges = append(in.Ranges, client.DateRange{From: from, To: to})
	}
	return in, nil
}

func calendarTable(c *client.Calendar) *table {
	ranges := make([]string, len(c.Ranges))
	for i, r := range c.Ranges {
		ranges[i] = r.From + ".." + r.To
	}
	return fields("id", c.ID, "name", c.Name, "timezone", c.Timezone, "dates", strings.Join(c.Dates, ", "),
		"ranges", strings.Join(ranges, ", "), "rrules", strings.Join(c.Rrules, ", "), "tags", strings.Join(c.Tags, ", "),
		"version", fmt.Sprint(c.Version), "replan pending", flag(&c.ReplanPending))
}

func newCalendarsCreateCmd(a *app) *cobra.Command {
	var f calendarFlags
	cmd := &cobra.Command{
		Use:     "create --name NAME [--date D] [--range FROM..TO] [--rrule R]",
		Short:   "Create an exclusion calendar",
		Example: `  qhronos calendars create --name weekends --rrule "FREQ=WEEKLY;BYDAY=SA,SU"`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := f.input()
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			cal, err := c.Calendars.Create(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.render(cal, calendarTable(cal))
		},
	}
	f.register(cmd)
	return cmd
}

func newCalendarsUpdateCmd(a *app) *cobra.Command {
	var f calendarFlags
	cmd := &cobra.Command{
		Use:     "update CALENDAR_ID --name NAME [--date D] [--range FROM..TO] [--rrule R]",
		Short:   "Replace a calendar; the events that use it are re-planned in the background",
		Example: `  qhronos calendars update 7a1e… --name holidays --date 2030-12-24 --date 2030-12-25`,
		Args:    exactArgs("CALENDAR_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := f.input()
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			cal, err := c.Calendars.Update(cmd.Context(), args[0], in)
			if err != nil {
				return err
			}
			return a.render(cal, calendarTable(cal))
		},
	}
	f.register(cmd)
	return cmd
}

func newCalendarsListCmd(a *app) *cobra.Command {
	var tags []string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List calendars, newest first",
		Example: `  qhronos calendars list --tag billing`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			cals := []client.Calendar{}
			for cal, err := range c.Calendars.All(cmd.Context(), client.GetCalendarsParams{Tags: tags}) {
				if err != nil {
					return err
				}
				cals = append(cals, cal)
			}
			t := &table{header: []string{"ID", "NAME", "TIMEZONE", "DATES", "RANGES", "RRULES", "TAGS"}}
			for _, cal := range cals {
				t.add(cal.ID, cal.Name, cal.Timezone, fmt.Sprint(len(cal.Dates)), fmt.Sprint(len(cal.Ranges)),
					strings.Join(cal.Rrules, ", "), strings.Join(cal.Tags, ", "))
			}
			return a.render(cals, t)
		},
	}
	cmd.Flags().StringArrayVar(&tags, "tag", nil, "calendars with any of these tags (repeatable)")
	return cmd
}

func newCalendarsGetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "get CALENDAR_ID",
		Short:   "Show one calendar",
		Example: `  qhronos calendars get 7a1e…`,
		Args:    exactArgs("CALENDAR_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			cal, err := c.Calendars.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.render(cal, calendarTable(cal))
		},
	}
}

func newCalendarsDeleteCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "delete CALENDAR_ID",
		Short:   "Delete a calendar no event uses",
		Example: `  qhronos calendars delete 7a1e…`,
		Args:    exactArgs("CALENDAR_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.Calendars.Delete(cmd.Context(), args[0]); err != nil {
				return err
			}
			return a.render(map[string]string{"deleted": args[0]}, &table{rows: [][]string{{"deleted " + args[0]}}})
		},
	}
}
