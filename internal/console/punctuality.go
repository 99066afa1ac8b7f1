package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/qhronos/qhronos/client"
)

// The Punctuality page: GET /stats/punctuality as an operator reads it (and
// sends on to their own users): a figure per event, endpoint or tag, a
// sortable table and a trend, scoped by the signed-in token like every read.

// punctualityRanges are the page's window choices; "custom" takes from/to.
var punctualityRanges = map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour,
	"30d": 30 * 24 * time.Hour}

// punctualityFilter is the page's form, as its query string holds it.
type punctualityFilter struct {
	Range, From, To, GroupBy, Tolerance, Tag string
}

// punctualityField maps an API field to the form control showing its error.
var punctualityField = map[string]string{"from": "from", "since": "from", "to": "to", "until": "to",
	"group_by": "group_by", "tolerance": "tolerance", "tag": "tag"}

func readPunctualityFilter(v url.Values) (punctualityFilter, map[string]string) {
	f := punctualityFilter{Range: v.Get("range"), From: strings.TrimSpace(v.Get("from")),
		To: strings.TrimSpace(v.Get("to")), GroupBy: v.Get("group_by"), Tolerance: strings.TrimSpace(v.Get("tolerance")),
		Tag: strings.TrimSpace(v.Get("tag"))}
	errs := map[string]string{}
	switch {
	case f.Range == "" && (f.From != "" || f.To != ""):
		f.Range = "custom" // a link naming a window
	case f.Range == "":
		f.Range = "7d"
	}
	if _, ok := punctualityRanges[f.Range]; !ok && f.Range != "custom" {
		errs["range"] = "choose the last 24 hours, 7 days, 30 days or a custom window"
	}
	if f.Range == "custom" && f.From == "" {
		errs["from"] = "a custom window needs a start"
	}
	if f.GroupBy == "" {
		f.GroupBy = "event"
	}
	if f.Tolerance == "" {
		f.Tolerance = "1s"
	}
	return f, errs
}

// params is the form as GET /stats/punctuality parameters.
func (f punctualityFilter) params(now time.Time) client.PunctualityParams {
	p := client.PunctualityParams{GroupBy: client.Ptr(client.GetStatsPunctualityParamsGroupBy(f.GroupBy)),
		Tolerance: &f.Tolerance}
	if d, ok := punctualityRanges[f.Range]; ok {
		p.From = client.Ptr(now.Add(-d).UTC().Format(time.RFC3339))
	} else {
		p.From = &f.From
		if f.To != "" {
			p.To = &f.To
		}
	}
	if f.Tag != "" {
		p.Tag = []string{f.Tag}
	}
	return p
}

// punctualityRow is one group of the table, with its figures ready to show
// and the values the browser sorts on.
type punctualityRow struct {
	Key, Name                 string
	Link                      string
	Counts                    client.PunctualityCounts
	OnTimePct, SuccessPct     string
	OnTimeSort, SuccessSort   float64
	LateP50, LateP95, LateP99 string
	HasLateness               bool
}

type punctualityData struct {
	Filter           punctualityFilter
	Errors           map[string]string
	Report           *client.PunctualityReport
	Rows             []punctualityRow
	Total            punctualityRow
	Chart            string
	GroupLabel, Step string
	Tolerance        string
}

func (c *Console) punctualityPage(w http.ResponseWriter, r *http.Request, s *session) {
	f, errs := readPunctualityFilter(r.URL.Query())
	d := punctualityData{Filter: f, Errors: errs, GroupLabel: map[string]string{"event": "Event",
		"endpoint": "Endpoint", "tag": "Tag"}[f.GroupBy]}
	if d.GroupLabel == "" {
		d.GroupLabel = "Group"
	}
	v := view{Title: "Punctuality", Nav: "overview", Data: &d}
	if len(errs) > 0 {
		c.render(w, r, s, "punctuality", http.StatusBadRequest, v)
		return
	}
	rep, err := c.sdk(r).Punctuality(r.Context(), f.params(c.opts.Now()))
	if err = sdkError(err); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
			if field := punctualityField[ae.Field]; field != "" {
				d.Errors[field] = fieldMessage(ae)
			} else {
				v.Error = ae.Message
			}
			c.render(w, r, s, "punctuality", http.StatusBadRequest, v)
			return
		}
		c.fail(w, r, s, err)
		return
	}
	d.Report, d.Step = rep, map[string]string{"1h": "hour", "1d": "day (UTC)"}[string(rep.TrendStep)]
	for _, g := range rep.Groups {
		row := toPunctualityRow(g.Name, g.Counts())
		if g.Key != nil {
			row.Key = *g.Key
			switch f.GroupBy {
			case "event":
				row.Link = "/ui/events/" + url.PathEscape(*g.Key)
			case "endpoint":
				row.Link = "/ui/endpoints/" + url.PathEscape(*g.Key)
			}
		}
		d.Rows = append(d.Rows, row)
	}
	d.Total = toPunctualityRow("All", rep.Total)
	d.Tolerance = formatMS(int64(rep.ToleranceMs))
	d.Chart = punctualityChart(rep)
	c.render(w, r, s, "punctuality", http.StatusOK, v)
}

func toPunctualityRow(name string, c client.PunctualityCounts) punctualityRow {
	row := punctualityRow{Name: name, Counts: c, OnTimePct: "—", SuccessPct: "—", OnTimeSort: -1, SuccessSort: -1}
	if r := c.OnTimeRatio; r != nil {
		row.OnTimePct, row.OnTimeSort = fmt.Sprintf("%.1f %%", *r*100), *r
	}
	if r := c.SuccessRatio; r != nil {
		row.SuccessPct, row.SuccessSort = fmt.Sprintf("%.1f %%", *r*100), *r
	}
	if l := c.LatenessMs; l.Count > 0 {
		row.HasLateness = true
		row.LateP50, row.LateP95, row.LateP99 = formatMS(int64(l.P50)), formatMS(int64(l.P95)), formatMS(int64(l.P99))
	}
	return row
}

// punctualityChartData is what app.js hands to uPlot: x in Unix seconds,
// the on-time share in percent (null where nothing fired) and the instants
// due per step.
type punctualityChartData struct {
	X      []int64    `json:"x"`
	OnTime []*float64 `json:"on_time"`
	Due    []int      `json:"due"`
}

func punctualityChart(rep *client.PunctualityReport) string {
	var d punctualityChartData
	for _, p := range rep.Trend {
		d.X = append(d.X, p.Start.Unix())
		d.Due = append(d.Due, p.Due)
		var pct *float64
		if p.OnTimeRatio != nil {
			v := *p.OnTimeRatio * 100
			pct = &v
		}
		d.OnTime = append(d.OnTime, pct)
	}
	b, _ := json.Marshal(d)
	return string(b)
}
