package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// The one place that formats output: JSON (stable, indented, the API's own
// field names) or a table of the given columns.

// table is a rendering for --output table.
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// render writes v as JSON, or t as an aligned table.
func (a *app) render(v any, t *table) error {
	if a.output == "json" {
		return writeJSON(a.stdout, v)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	if len(t.header) > 0 {
		fmt.Fprintln(tw, strings.Join(t.header, "\t"))
	}
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
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

func when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
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
