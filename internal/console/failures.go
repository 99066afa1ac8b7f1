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
)

// failureFilter is the Failures page's filter, as the query string holds it.
type failureFilter struct {
	Status string // failed, timed_out, missed or all three
	Tags   string
	Window string // 1h, 24h, 7d, 30d or all
	Code   string
}

// allFailures is every failure state: failed, a run that timed out (a
// callback event's receiver never completed it), and missed.
const allFailures = "failed,timed_out,missed"

var windows = map[string]time.Duration{"1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour,
	"30d": 30 * 24 * time.Hour}

func readFailureFilter(v url.Values) (failureFilter, map[string]string) {
	f := failureFilter{Status: v.Get("status"), Tags: strings.TrimSpace(v.Get("tags")), Window: v.Get("window"),
		Code: strings.TrimSpace(v.Get("status_code"))}
	errs := map[string]string{}
	switch f.Status {
	case "failed", "timed_out", "missed":
	default:
		f.Status = allFailures
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

// params is the filter as GET /occurrences parameters.
func (f failureFilter) params() client.ListOccurrencesParams {
	p := client.ListOccurrencesParams{Status: client.Ptr(f.Status), From: f.since()}
	if f.Tags != "" {
		p.Tags = []string{f.Tags}
	}
	if f.Code != "" {
		n, _ := strconv.Atoi(f.Code)
		p.StatusCode = &n
	}
	return p
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

// retryFilter is the filter as a POST /occurrences/retry body.
func (f failureFilter) retryFilter(limit int) client.RetryFilter {
	b := client.RetryFilter{Status: client.Ptr(f.Status), Limit: &limit, Since: f.since()}
	if f.Tags != "" {
		b.Tags = strings.Split(f.Tags, ",")
	}
	if f.Code != "" {
		n, _ := strconv.Atoi(f.Code)
		b.StatusCode = &n
	}
	return b
}

// failureRow is one failed, timed-out or missed occurrence with its
// event's name.
type failureRow struct {
	ID, EventID, Status string
	ScheduledAt         time.Time
	StatusCode          *int
	ErrorMessage        *string
	EventName           string
}

func toFailureRows(list []client.Occurrence) []failureRow {
	out := make([]failureRow, 0, len(list))
	for _, o := range list {
		out = append(out, failureRow{ID: o.ID, EventID: o.EventID, Status: string(o.Status), ScheduledAt: o.ScheduledAt,
			StatusCode: o.StatusCode, ErrorMessage: o.ErrorMessage})
	}
	return out
}

type failuresData struct {
	Filter    failureFilter
	Errors    map[string]string
	Rows      []failureRow
	Total     int
	AtLeast   bool // Total is a lower bound
	NextQuery template.URL
	PageQuery template.URL
	Back      string
}

// maxBulkReplay is the most one bulk replay re-queues (the API's maximum).
const maxBulkReplay = 10000

func (c *Console) failuresPage(w http.ResponseWriter, r *http.Request, s *session) {
	f, errs := readFailureFilter(r.URL.Query())
	d := failuresData{Filter: f, Errors: errs, PageQuery: queryURL(f.page())}
	d.Back = base(r) + "/failures?" + string(d.PageQuery)
	if len(errs) > 0 {
		c.render(w, r, s, "failures", http.StatusBadRequest, view{Title: "Failures", Nav: "failures", Data: d})
		return
	}
	q := f.params()
	q.Limit = client.Ptr(pageSize)
	if cur := r.URL.Query().Get("cursor"); cur != "" {
		q.Cursor = &cur
	}
	pg, err := c.sdk(r).Occurrences.List(r.Context(), q)
	if err = sdkError(err); err != nil {
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
	d.Rows = toFailureRows(pg.Data)
	total, atLeast := pg.Pagination.Total, pg.Pagination.TotalIsLowerBound
	if total == nil {
		// A cursor page carries no total: show the first page's bounded one.
		head := f.params()
		head.Limit = client.Ptr(1)
		first, err := c.sdk(r).Occurrences.List(r.Context(), head)
		if err = sdkError(err); err != nil {
			c.fail(w, r, s, err)
			return
		}
		total, atLeast = first.Pagination.Total, first.Pagination.TotalIsLowerBound
	}
	if total != nil {
		d.Total = *total
	}
	d.AtLeast = atLeast != nil && *atLeast
	if next := pg.Pagination.NextCursor; next != nil && *next != "" {
		nq := f.page()
		nq.Set("cursor", *next)
		d.NextQuery = queryURL(nq)
	}
	// The portal reads no events: its rows name them by id.
	if !s.inPortal() {
		if err := c.nameEvents(r, d.Rows); err != nil {
			c.fail(w, r, s, err)
			return
		}
	}
	c.render(w, r, s, "failures", http.StatusOK, view{Title: "Failures", Nav: "failures", Data: d})
}

// nameEvents fills in the event name of each row.
func (c *Console) nameEvents(r *http.Request, rows []failureRow) error {
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].EventID
	}
	names, err := c.eventNames(r, ids)
	for i := range rows {
		rows[i].EventName = names[rows[i].EventID]
	}
	return err
}

// eventNames reads the name of each event, one API read per distinct
// event; an event the token can no longer read is "(deleted event)".
func (c *Console) eventNames(r *http.Request, ids []string) (map[string]string, error) {
	sdk := c.sdk(r)
	names := map[string]string{}
	for _, id := range ids {
		if _, ok := names[id]; ok {
			continue
		}
		ev, err := sdk.Events.Get(r.Context(), id)
		if err = sdkError(err); errors.Is(err, errSignedOut) {
			return names, err
		}
		names[id] = "(deleted event)"
		if err == nil {
			names[id] = ev.Name
		}
	}
	return names, nil
}

type bulkData struct {
	Filter    failureFilter
	Count     int
	Capped    bool
	PageQuery template.URL
}

func (c *Console) confirmBulkReplay(w http.ResponseWriter, r *http.Request, s *session) {
	f, errs := readFailureFilter(r.URL.Query())
	if len(errs) > 0 {
		redirect(w, r, base(r)+"/failures?"+f.page().Encode(), "Fix the filter first.")
		return
	}
	q := f.params()
	q.Limit = client.Ptr(1)
	pg, err := c.sdk(r).Occurrences.List(r.Context(), q)
	if err = sdkError(err); err != nil {
		c.fail(w, r, s, err)
		return
	}
	total := 0
	if pg.Pagination.Total != nil {
		total = *pg.Pagination.Total
	}
	capped := total > maxBulkReplay || (total == maxBulkReplay && pg.Pagination.TotalIsLowerBound != nil && *pg.Pagination.TotalIsLowerBound)
	d := bulkData{Filter: f, Count: min(total, maxBulkReplay), Capped: capped,
		PageQuery: queryURL(f.page())}
	c.render(w, r, s, "bulk", http.StatusOK, view{Title: "Replay failures", Nav: "failures", Data: d})
}

func (c *Console) bulkReplay(w http.ResponseWriter, r *http.Request, s *session) {
	v := url.Values{}
	for _, k := range []string{"status", "tags", "window", "status_code"} {
		v.Set(k, r.PostFormValue(k))
	}
	f, errs := readFailureFilter(v)
	back := base(r) + "/failures?" + f.page().Encode()
	if len(errs) > 0 {
		redirect(w, r, back, "Fix the filter first.")
		return
	}
	limit, err := strconv.Atoi(r.PostFormValue("count"))
	if err != nil || limit < 1 {
		redirect(w, r, back, "Nothing to replay.")
		return
	}
	out, err := c.sdk(r).Occurrences.ReplayMatching(r.Context(), f.retryFilter(min(limit, maxBulkReplay)))
	if err = sdkError(err); err != nil {
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
