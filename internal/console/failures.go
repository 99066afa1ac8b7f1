package console

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// failureFilter is the Failures page's filter, as the query string holds it.
type failureFilter struct {
	Status string // failed, missed or both
	Tags   string
	Window string // 1h, 24h, 7d, 30d or all
	Code   string
}

var windows = map[string]time.Duration{"1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour,
	"30d": 30 * 24 * time.Hour}

func readFailureFilter(v url.Values) (failureFilter, map[string]string) {
	f := failureFilter{Status: v.Get("status"), Tags: strings.TrimSpace(v.Get("tags")), Window: v.Get("window"),
		Code: strings.TrimSpace(v.Get("status_code"))}
	errs := map[string]string{}
	switch f.Status {
	case "failed", "missed":
	default:
		f.Status = "failed,missed"
	}
	if _, ok := windows[f.Window]; !ok && f.Window != "all" {
		f.Window = "24h"
	}
	if f.Code != "" {
		if n, err := strconv.Atoi(f.Code); err != nil || n < 100 || n > 599 {
			errs["status_code"] = "must be an HTTP status code between 100 and 599"
		}
	}
	return f, errs
}

// since is the lower bound of the window, nil for all.
func (f failureFilter) since() *time.Time {
	d, ok := windows[f.Window]
	if !ok {
		return nil
	}
	t := time.Now().UTC().Add(-d)
	return &t
}

// query is the filter as GET /occurrences parameters.
func (f failureFilter) query() url.Values {
	q := url.Values{"status": {f.Status}}
	if f.Tags != "" {
		q.Set("tags", f.Tags)
	}
	if t := f.since(); t != nil {
		q.Set("from", t.Format(time.RFC3339))
	}
	if f.Code != "" {
		q.Set("status_code", f.Code)
	}
	return q
}

// page is the filter as the console's own query string.
func (f failureFilter) page() url.Values {
	q := url.Values{"status": {f.Status}, "window": {f.Window}}
	if f.Tags != "" {
		q.Set("tags", f.Tags)
	}
	if f.Code != "" {
		q.Set("status_code", f.Code)
	}
	return q
}

// retryBody is the filter as a POST /occurrences/retry body.
func (f failureFilter) retryBody(limit int) map[string]any {
	b := map[string]any{"status": strings.Split(f.Status, ","), "limit": limit}
	if f.Tags != "" {
		b["tags"] = strings.Split(f.Tags, ",")
	}
	if t := f.since(); t != nil {
		b["since"] = t.Format(time.RFC3339)
	}
	if f.Code != "" {
		n, _ := strconv.Atoi(f.Code)
		b["status_code"] = n
	}
	return b
}

type occurrencePage struct {
	Data       []occurrenceJSON `json:"data"`
	Pagination struct {
		// Total is absent on cursor pages and bounded on the first page.
		Total             *int   `json:"total"`
		TotalIsLowerBound bool   `json:"total_is_lower_bound"`
		NextCursor        string `json:"next_cursor"`
	} `json:"pagination"`
}

type failuresData struct {
	Filter    failureFilter
	Errors    map[string]string
	Rows      []occurrenceJSON
	Total     int
	AtLeast   bool // Total is a lower bound
	NextQuery string
	PageQuery string
	Back      string
}

// maxBulkReplay is the most one bulk replay re-queues (the API's maximum).
const maxBulkReplay = 10000

func (c *Console) failuresPage(w http.ResponseWriter, r *http.Request, s *session) {
	f, errs := readFailureFilter(r.URL.Query())
	d := failuresData{Filter: f, Errors: errs, PageQuery: f.page().Encode()}
	d.Back = Prefix + "/failures?" + d.PageQuery
	if len(errs) > 0 {
		c.render(w, r, s, "failures", http.StatusBadRequest, view{Title: "Failures", Nav: "failures", Data: d})
		return
	}
	q := f.query()
	q.Set("limit", strconv.Itoa(pageSize))
	if cur := r.URL.Query().Get("cursor"); cur != "" {
		q.Set("cursor", cur)
	}
	var pg occurrencePage
	if _, err := c.do(r, s, "GET", "/occurrences", q, nil, &pg); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
			if ae.Field != "" {
				d.Errors[ae.Field] = fieldMessage(ae)
			}
			c.render(w, r, s, "failures", http.StatusBadRequest, view{Title: "Failures", Nav: "failures", Data: d,
				Error: ae.Message})
			return
		}
		c.fail(w, r, s, err)
		return
	}
	d.Rows = pg.Data
	if pg.Pagination.Total == nil {
		// A cursor page carries no total: the first page's bounded one.
		first := f.query()
		first.Set("limit", "1")
		var head occurrencePage
		if _, err := c.do(r, s, "GET", "/occurrences", first, nil, &head); err != nil {
			c.fail(w, r, s, err)
			return
		}
		pg.Pagination.Total, pg.Pagination.TotalIsLowerBound = head.Pagination.Total, head.Pagination.TotalIsLowerBound
	}
	if pg.Pagination.Total != nil {
		d.Total, d.AtLeast = *pg.Pagination.Total, pg.Pagination.TotalIsLowerBound
	}
	if pg.Pagination.NextCursor != "" {
		nq := f.page()
		nq.Set("cursor", pg.Pagination.NextCursor)
		d.NextQuery = nq.Encode()
	}
	if err := c.nameEvents(r, s, d.Rows); err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, "failures", http.StatusOK, view{Title: "Failures", Nav: "failures", Data: d})
}

// nameEvents fills in the event name and zone of each row, one API read
// per distinct event on the page.
func (c *Console) nameEvents(r *http.Request, s *session, rows []occurrenceJSON) error {
	seen := map[string]*eventJSON{}
	for i := range rows {
		id := rows[i].EventID
		ev, ok := seen[id]
		if !ok {
			got, err := c.getEvent(r, s, id)
			if errors.Is(err, errSignedOut) {
				return err
			}
			if err == nil {
				ev = &got
			}
			seen[id] = ev
		}
		if ev != nil {
			rows[i].EventName, rows[i].EventZone = ev.Name, ev.Timezone
		} else {
			rows[i].EventName = "(deleted event)"
		}
	}
	return nil
}

type bulkData struct {
	Filter    failureFilter
	Count     int
	Capped    bool
	PageQuery string
}

func (c *Console) confirmBulkReplay(w http.ResponseWriter, r *http.Request, s *session) {
	f, errs := readFailureFilter(r.URL.Query())
	if len(errs) > 0 {
		redirect(w, r, Prefix+"/failures?"+f.page().Encode(), "Fix the filter first.")
		return
	}
	q := f.query()
	q.Set("limit", "1")
	var pg occurrencePage
	if _, err := c.do(r, s, "GET", "/occurrences", q, nil, &pg); err != nil {
		c.fail(w, r, s, err)
		return
	}
	total := 0
	if pg.Pagination.Total != nil {
		total = *pg.Pagination.Total
	}
	capped := total > maxBulkReplay || (total == maxBulkReplay && pg.Pagination.TotalIsLowerBound)
	d := bulkData{Filter: f, Count: min(total, maxBulkReplay), Capped: capped,
		PageQuery: f.page().Encode()}
	c.render(w, r, s, "bulk", http.StatusOK, view{Title: "Replay failures", Nav: "failures", Data: d})
}

func (c *Console) bulkReplay(w http.ResponseWriter, r *http.Request, s *session) {
	v := url.Values{}
	for _, k := range []string{"status", "tags", "window", "status_code"} {
		v.Set(k, r.PostFormValue(k))
	}
	f, errs := readFailureFilter(v)
	back := Prefix + "/failures?" + f.page().Encode()
	if len(errs) > 0 {
		redirect(w, r, back, "Fix the filter first.")
		return
	}
	limit, err := strconv.Atoi(r.PostFormValue("count"))
	if err != nil || limit < 1 {
		redirect(w, r, back, "Nothing to replay.")
		return
	}
	var out struct {
		Requeued     int  `json:"requeued"`
		LimitReached bool `json:"limit_reached"`
	}
	if _, err := c.do(r, s, "POST", "/occurrences/retry", nil, f.retryBody(min(limit, maxBulkReplay)), &out); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			redirect(w, r, back, "Replay failed: "+ae.Message)
			return
		}
		c.fail(w, r, s, err)
		return
	}
	msg := "Replay queued for " + strconv.Itoa(out.Requeued) + " occurrences."
	if out.Requeued < limit {
		msg += " The others are of events your token may not change, or were replayed already."
	}
	redirect(w, r, back, msg)
}
