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

// The In flight page: the work across events that has not ended yet, due
// now or later being retried, read with GET /occurrences (waiting states,
// scheduled up to now, oldest first) and scoped by the signed-in token like
// every read.

// inflightStates are the page's state choices and the statuses each lists.
// "due" is pending and due: with bucket ownership a delivery being sent
// stays pending until its outcome is recorded, so it is among them.
// "running" is a callback event's run: delivered and accepted, waiting for
// the receiver to complete it.
var inflightStates = map[string]string{
	"":             "pending,dispatching,retrying,awaiting_ack,running",
	"due":          "pending",
	"dispatching":  "dispatching",
	"retrying":     "retrying",
	"awaiting_ack": "awaiting_ack",
	"running":      "running",
}

// inflightReasons are the page's reason choices: the one reason a row in
// flight carries is concurrency_wait (due, waiting for its concurrency
// key's slot).
var inflightReasons = map[string]bool{"": true, "concurrency_wait": true}

// inflightFilter is the page's filter, as its query string holds it.
type inflightFilter struct {
	State, Reason, Tags, Endpoint, Q string
}

func readInflightFilter(v url.Values) (inflightFilter, map[string]string) {
	f := inflightFilter{State: v.Get("state"), Reason: v.Get("reason"), Tags: strings.TrimSpace(v.Get("tags")),
		Endpoint: strings.TrimSpace(v.Get("endpoint")), Q: strings.TrimSpace(v.Get("q"))}
	errs := map[string]string{}
	if _, ok := inflightStates[f.State]; !ok {
		errs["state"] = "choose due, dispatching, retrying, awaiting ack or running"
	}
	if !inflightReasons[f.Reason] {
		errs["reason"] = "choose any or concurrency_wait"
	}
	return f, errs
}

// query is the filter as the page's own query string.
func (f inflightFilter) query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"state": f.State, "reason": f.Reason, "tags": f.Tags, "endpoint": f.Endpoint,
		"q": f.Q} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// params is the filter as GET /occurrences parameters: the waiting
// states scheduled up to now, oldest first (the longest waiting on top).
func (f inflightFilter) params(now time.Time) client.ListOccurrencesParams {
	order := client.OccurrenceOrderScheduledAt
	to := now.Add(time.Millisecond)
	p := client.ListOccurrencesParams{Status: client.Ptr(inflightStates[f.State]), To: &to, Order: &order,
		Limit: client.Ptr(pageSize)}
	if f.Tags != "" {
		p.Tags = []string{f.Tags}
	}
	if f.Endpoint != "" {
		p.EndpointID = &f.Endpoint
	}
	if f.Q != "" {
		p.Q = &f.Q
	}
	if f.Reason != "" {
		p.Reason = &f.Reason
	}
	return p
}

// inflightField maps an API field to the filter control showing its error.
var inflightField = map[string]string{"endpoint_id": "endpoint", "q": "q", "tags": "tags", "status": "state",
	"reason": "reason"}

type inflightRow struct {
	ID, EventID, EventName, Status string
	ScheduledAt                    time.Time
	Attempts                       int
	NextAttempt                    *time.Time
	// RunDeadline is when a running row times out unless its receiver
	// completes it or sends a heartbeat.
	RunDeadline *time.Time
	// Answer is the last attempt's status code and error, the code once.
	Answer string
	Manual bool
	// Reason is concurrency_wait for a due row waiting for its
	// concurrency key's slot.
	Reason string
}

// lastAnswer writes a status code and an error, the code left out when the
// error already names it ("receiver answered 503").
func lastAnswer(code *int, msg string) string {
	if code == nil {
		return msg
	}
	c := strconv.Itoa(*code)
	if strings.Contains(msg, c) {
		return msg
	}
	return strings.TrimSpace(c + " " + msg)
}

type inflightData struct {
	Filter    inflightFilter
	Errors    map[string]string
	Endpoints []endpointChoice
	Rows      []inflightRow
	Total     int
	AtLeast   bool
	First     bool
	FirstPage template.URL
	NextQuery template.URL
	Now       time.Time
}

func (c *Console) inflightPage(w http.ResponseWriter, r *http.Request, s *session) {
	f, errs := readInflightFilter(r.URL.Query())
	cur := r.URL.Query().Get("cursor")
	d := inflightData{Filter: f, Errors: errs, First: cur == "", FirstPage: queryURL(f.query()), Now: c.opts.Now()}
	api := c.sdk(r)
	eps, err := api.Endpoints.List(r.Context(), client.ListEndpointsParams{Limit: client.Ptr(pickerLimit)})
	if err != nil && !unlisted(err) {
		c.fail(w, r, s, sdkError(err))
		return
	}
	if eps != nil {
		for _, e := range eps.Items {
			d.Endpoints = append(d.Endpoints, endpointChoice{ID: e.ID, Name: e.Name, URL: e.URL})
		}
	}
	v := view{Title: "In flight", Nav: "inflight", Data: &d}
	if len(errs) > 0 {
		c.render(w, r, s, "inflight", http.StatusBadRequest, v)
		return
	}
	p := f.params(d.Now)
	if cur != "" {
		p.Cursor = &cur
	}
	pg, err := api.Occurrences.List(r.Context(), p)
	if err = sdkError(err); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
			if field := inflightField[ae.Field]; field != "" {
				d.Errors[field] = fieldMessage(ae)
			} else {
				v.Error = ae.Message
			}
			c.render(w, r, s, "inflight", http.StatusBadRequest, v)
			return
		}
		c.fail(w, r, s, err)
		return
	}
	if t := pg.Pagination.Total; t != nil {
		d.Total = *t
	}
	d.AtLeast = pg.Pagination.TotalIsLowerBound != nil && *pg.Pagination.TotalIsLowerBound
	if next := pg.Pagination.NextCursor; next != nil && *next != "" {
		nq := f.query()
		nq.Set("cursor", *next)
		d.NextQuery = queryURL(nq)
	}
	ids := make([]string, 0, len(pg.Data))
	for _, o := range pg.Data {
		ids = append(ids, o.EventID)
		row := inflightRow{ID: o.ID, EventID: o.EventID, Status: string(o.Status),
			ScheduledAt: o.ScheduledAt, Attempts: o.AttemptCount, NextAttempt: o.NextAttemptAt,
			Answer: lastAnswer(o.StatusCode, str(o.ErrorMessage)), Manual: o.Manual != nil && *o.Manual}
		if o.Reason != nil {
			row.Reason = string(*o.Reason)
		}
		if o.Run != nil {
			row.RunDeadline = o.Run.Deadline
		}
		d.Rows = append(d.Rows, row)
	}
	names, err := c.eventNames(r, ids)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	for i := range d.Rows {
		d.Rows[i].EventName = names[d.Rows[i].EventID]
	}
	c.render(w, r, s, "inflight", http.StatusOK, v)
}

// Waiting is how long a row has been due, for the page.
func (d *inflightData) Waiting(at time.Time) string {
	w := d.Now.Sub(at)
	if w < time.Second {
		return "just due"
	}
	return w.Round(time.Second).String()
}
