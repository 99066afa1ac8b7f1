package console

import (
	"html/template"
	"net/http"
	"net/url"
	"time"

	"github.com/qhronos/qhronos/client"
)

// The deliveries of fan-out (an event that targets a topic): on the
// occurrence's page one row per subscription that matched when it fired,
// each with its own Replay; on a subscription's page the attempts made for
// it, newest first.

// fanoutPage is the deliveries an occurrence's page lists at once.
const fanoutPage = 100

// subscriptionDeliveriesShown is the attempts a subscription's page lists
// at once.
const subscriptionDeliveriesShown = 25

// fanoutView is a fan-out occurrence's deliveries as its page shows them:
// the counts of the occurrence, then one page of rows.
type fanoutView struct {
	Subscriptions, Delivered, Failed, Filtered, Pending int
	Rows                                                []fanoutRow
	// Unlisted: the rows could not be read (the token may not, or the
	// server has no such route); the counts are shown alone.
	Unlisted bool
	// Later says the rows shown are not the first page; More is the query
	// of the next page ("" on the last).
	Later bool
	More  template.URL
}

// fanoutRow is one subscription's delivery: its endpoint (named when the
// token can read it), its status, how many attempts it took, the last
// attempt's status code, why it failed, and when a pending one is tried
// next.
type fanoutRow struct {
	SubscriptionID, EndpointID, EndpointName, Status, Error string
	Attempts                                                int
	LastCode                                                *int
	NextAttempt                                             *time.Time
}

// Replayable says whether the delivery may be sent again on its own: the
// API replays a failed or a delivered one.
func (f fanoutRow) Replayable() bool { return f.Status == "failed" || f.Status == "delivered" }

// Badge is the status's badge class.
func (f fanoutRow) Badge() string {
	switch f.Status {
	case "delivered":
		return badgeClass("completed")
	case "pending":
		return badgeClass("retrying")
	}
	return badgeClass(f.Status)
}

func viewFanoutRow(d client.Delivery) fanoutRow {
	row := fanoutRow{SubscriptionID: d.SubscriptionID, EndpointID: str(d.EndpointID), Status: string(d.Status),
		Error: str(d.Error), Attempts: len(d.Attempts), NextAttempt: d.NextAttemptAt}
	if n := len(d.Attempts); n > 0 {
		last := d.Attempts[n-1]
		row.LastCode = last.StatusCode
		if row.Error == "" && d.Status != client.DeliveryStatusDelivered {
			row.Error = str(last.Error)
		}
	}
	return row
}

// fanout reads the deliveries of a fan-out occurrence, the page the query's
// deliveries cursor names (the first without one); nil for an occurrence
// that runs an action, or whose first round has not resolved its
// subscriptions yet.
func (c *Console) fanout(r *http.Request, occ *client.Occurrence) (*fanoutView, error) {
	sum := occ.Fanout
	if sum == nil {
		return nil, nil
	}
	v := &fanoutView{Subscriptions: sum.Subscriptions, Delivered: sum.Delivered, Failed: sum.Failed,
		Filtered: sum.Filtered, Pending: sum.Pending}
	p := client.ListOccurrenceDeliveriesParams{Limit: client.Ptr(fanoutPage)}
	if cur := r.URL.Query().Get("deliveries"); cur != "" {
		p.Cursor, v.Later = &cur, true
	}
	page, err := c.sdk(r).Occurrences.Deliveries(r.Context(), occ.ID, p)
	if err != nil {
		if unlisted(err) {
			v.Unlisted = true
			return v, nil
		}
		return nil, sdkError(err)
	}
	names, err := c.endpointNames(r)
	if err != nil {
		return nil, err
	}
	for _, d := range page.Items {
		row := viewFanoutRow(d)
		row.EndpointName = names[row.EndpointID]
		v.Rows = append(v.Rows, row)
	}
	if page.NextCursor != "" {
		v.More = queryURL(url.Values{"deliveries": {page.NextCursor}})
	}
	return v, nil
}

// endpointNames maps the ids of the endpoints the token can read (the
// pickers' first page) to their names, in one call; an endpoint beyond it
// keeps its id.
func (c *Console) endpointNames(r *http.Request) (map[string]string, error) {
	names := map[string]string{}
	eps, err := c.sdk(r).Endpoints.List(r.Context(), client.ListEndpointsParams{Limit: client.Ptr(pickerLimit)})
	if err != nil {
		if unlisted(err) {
			return names, nil
		}
		return nil, sdkError(err)
	}
	for _, e := range eps.Items {
		names[e.ID] = e.Name
	}
	return names, nil
}

// FanoutAttempts says whether an attempt went to a subscription: the
// Attempts table then names it.
func (o occurrenceView) FanoutAttempts() bool {
	for _, a := range o.Attempts {
		if a.SubscriptionID != "" {
			return true
		}
	}
	return false
}

// subscriptionDeliveries is the subscription page's Recent deliveries card:
// one page of the attempts made for it, newest first.
type subscriptionDeliveries struct {
	Attempts []attemptView
	// Unlisted: the attempts could not be read (a server without the
	// route); Later: not the first page; More: the next page's query.
	Unlisted bool
	Later    bool
	More     template.URL
}

// recentDeliveries reads the page of a subscription's attempts that the
// query's deliveries cursor names (the first without one).
func (c *Console) recentDeliveries(r *http.Request, id string) (subscriptionDeliveries, error) {
	var out subscriptionDeliveries
	p := client.ListSubscriptionDeliveriesParams{Limit: client.Ptr(subscriptionDeliveriesShown)}
	if cur := r.URL.Query().Get("deliveries"); cur != "" {
		p.Cursor, out.Later = &cur, true
	}
	page, err := c.sdk(r).Subscriptions.Deliveries(r.Context(), id, p)
	if err != nil {
		if unlisted(err) {
			out.Unlisted = true
			return out, nil
		}
		return out, sdkError(err)
	}
	for _, a := range page.Items {
		out.Attempts = append(out.Attempts, viewAttempt(a))
	}
	if page.NextCursor != "" {
		out.More = queryURL(url.Values{"deliveries": {page.NextCursor}})
	}
	return out, nil
}

// replayDelivery sends one subscription's delivery of a fan-out occurrence
// again (the Replay of its row) and comes back to back.
func (c *Console) replayDelivery(w http.ResponseWriter, r *http.Request, s *session, id, sub, back string) {
	out, err := c.sdk(r).Occurrences.ReplayDelivery(r.Context(), id, sub)
	if err = sdkError(err); err != nil {
		c.answerFailure(w, r, s, err, redirect, back, "Replay failed: ")
		return
	}
	redirect(w, r, back, "Replay queued: the delivery to subscription "+sub+" is sent again; the occurrence is "+
		string(out.Status)+".")
}
