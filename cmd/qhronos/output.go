package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"
)

// The one place that formats output: JSON (stable, indented, the API's own
// field names) or a table of the given columns.

// table is a rendering for --output table; its times are shown in one
// zone, said once below it.
type table struct {
	header []string
	rows   [][]string
	zone   zone
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// render writes v as JSON, or t as an aligned table.
func (a *app) render(v any, t *table) error {
	if a.output == "json" {
		return writeJSON(a.stdout, v)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	if len(t.header) > 0 {
		fmt.Fprintln(tw, joinCells(t.header))
	}
	for _, r := range t.rows {
		fmt.Fprintln(tw, joinCells(r))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case t.zone.note == "":
		return nil
	case a.utc:
		_, err := fmt.Fprintln(a.stdout, "(times in UTC)")
		return err
	default:
		_, err := fmt.Fprintf(a.stdout, "(times in %s, 24-hour with the UTC offset; --utc for UTC)\n", printable(t.zone.note))
		return err
	}
}

func joinCells(cells []string) string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = printable(c)
	}
	return strings.Join(out, "\t")
}

// printable escapes what a terminal would act on rather than show: C0 and
// C1 controls (ESC starts colour, title and clipboard sequences), DEL,
// bidirectional overrides, and bytes that are not UTF-8. Everything else is
// printed as is, so names in any script stay readable. Every table cell and
// every message on stderr passes through it; JSON output is escaped by its
// encoder.
func printable(s string) string {
	if strings.IndexFunc(s, needsEscape) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case needsEscape(r):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\t', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) ||
		r == 0x200e || r == 0x200f || r == 0x061c
}

// fields is a two-column table of one resource.
func fields(pairs ...string) *table {
	t := &table{}
	for i := 0; i+1 < len(pairs); i += 2 {
		t.add(strings.ToUpper(pairs[i])+":", pairs[i+1])
	}
	return t
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// str, num, when and list format optional values for tables.
func str(p *string) string {
	if p == nil || *p == "" {
		return "-"
	}
	return *p
}

func num(p *int) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// timeLayout is a table's time: 24-hour, with the offset, never ambiguous.
const timeLayout = "2006-01-02 15:04:05 -07:00"

// zone is where a table shows its times, and how it says so.
type zone struct {
	loc  *time.Location
	note string
}

// eventZone shows one event's instants in the event's own zone.
func (a *app) eventZone(name string) zone {
	if a.utc {
		return zone{time.UTC, "UTC"}
	}
	if loc, err := time.LoadLocation(name); err == nil && name != "" {
		return zone{loc, name + ", the event's zone"}
	}
	return zone{time.UTC, "UTC"}
}

// localZone shows times across events in the local zone ($TZ, else the
// system's).
func (a *app) localZone() zone {
	if a.utc {
		return zone{time.UTC, "UTC"}
	}
	loc := time.Local
	if tz := a.getenv("TZ"); tz != "" {
		if l, err := time.LoadLocation(strings.TrimPrefix(tz, ":")); err == nil {
			loc = l
		}
	}
	if name := loc.String(); name != "Local" {
		return zone{loc, name + ", the local zone"}
	}
	return zone{loc, "the local zone"}
}

func (z zone) when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	loc := z.loc
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format(timeLayout)
}

func list(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

func flag(b *bool) string {
	if b != nil && *b {
		return "yes"
	}
	return "no"
}

// renderDelivery prints one line of qhronos listen: a compact JSON object
// with --output json, else a readable line.
func (a *app) renderDelivery(d delivery, requireAck bool) {
	if a.output == "json" {
		b, _ := json.Marshal(d) // one object per line
		fmt.Fprintf(a.stdout, "%s\n", b)
		return
	}
	result := fmt.Sprintf("%d in %dms", d.StatusCode, d.DurationMS)
	if d.Error != "" {
		result = d.Error
	}
	note := ""
	switch {
	case d.Acked:
		note = " acked"
	case requireAck:
		note = " not acked: the server retries it"
	case d.Error != "":
		note = " (the event does not require an ack, so the server counts it delivered)"
	}
	if !d.Signed {
		note += " unsigned"
	}
	fmt.Fprintf(a.stdout, "%s  %s  %q attempt %d  -> %s%s\n", d.Time.Format(time.RFC3339), d.OccurrenceID,
		d.Name, d.Attempt, result, note)
}
