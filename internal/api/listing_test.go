package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// listingFixture is an event with three past and three upcoming
// occurrences; want is their default listing order (history newest first,
// then upcoming nearest first).
type listingFixture struct {
	eventID string
	status  string // every row's status
	want    []time.Time
}

func newListingFixture(t *testing.T, e *env, tags ...string) listingFixture {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	body := eventBody(tags...)
	body["start_time"] = now.Add(time.Hour).Format(time.RFC3339) // its one row is upcoming
	ev := e.createEvent(e.master, body)
	id := ev["id"].(string)
	past := []time.Time{now.Add(-time.Minute), now.Add(-2 * time.Minute), now.Add(-3 * time.Minute)}
	future := []time.Time{now.Add(2 * time.Hour), now.Add(3 * time.Hour)}
	_, err := e.store.InsertOccurrences(context.Background(), id, append(append([]time.Time{}, past...), future...),
		false, now)
	require.NoError(t, err)
	want := append(append([]time.Time{}, past...), now.Add(time.Hour), now.Add(2*time.Hour), now.Add(3*time.Hour))
	return listingFixture{eventID: id, status: "pending", want: want}
}

// scheduled lists the scheduled_at of a plain array or a {"data"} page.
func scheduled(t *testing.T, res response) []time.Time {
	t.Helper()
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var rows []struct {
		ScheduledAt time.Time `json:"scheduled_at"`
	}
	if strings.HasPrefix(strings.TrimSpace(string(res.Body)), "{") {
		var page struct {
			Data json.RawMessage `json:"data"`
		}
		res.json(t, &page)
		require.NoError(t, json.Unmarshal(page.Data, &rows))
	} else {
		res.json(t, &rows)
	}
	out := make([]time.Time, len(rows))
	for i, r := range rows {
		out[i] = r.ScheduledAt.UTC()
	}
	return out
}

var nextLink = regexp.MustCompile(`<([^>]+)>; rel="next"`)

// followLinks pages through a listing by its Link headers.
func followLinks(t *testing.T, e *env, path string) (all []time.Time, pages int) {
	t.Helper()
	for path != "" {
		res := e.do("GET", path, e.master, nil)
		all = append(all, scheduled(t, res)...)
		pages++
		require.Less(t, pages, 20, "paging does not end")
		path = ""
		if m := nextLink.FindStringSubmatch(res.Header.Get("Link")); m != nil {
			path = m[1]
		}
	}
	return all, pages
}

func reversed(in []time.Time) []time.Time {
	out := make([]time.Time, len(in))
	for i, v := range in {
		out[len(in)-1-i] = v
	}
	return out
}

func sortedAsc(in []time.Time) []time.Time {
	out := append([]time.Time{}, in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Before(out[i]) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// listingCases are the orders a listing of the fixture may ask for.
func listingCases(fx listingFixture) []struct {
	name, query string
	want        []time.Time
} {
	asc := sortedAsc(fx.want)
	from := url.QueryEscape(fx.want[2].Add(-time.Hour).Format(time.RFC3339))
	return []struct {
		name, query string
		want        []time.Time
	}{
		{"default", "", fx.want},
		{"oldest first", "order=scheduled_at", asc},
		{"newest first", "order=-scheduled_at", reversed(asc)},
		{"from keeps newest first", "from=" + from, reversed(asc)},
		{"since keeps newest first", "since=" + from, reversed(asc)},
		{"status keeps the default", "status=" + fx.status, fx.want},
	}
}

// checkListing asserts that arrays (plain-array routes) and pages
// ({"data","pagination"} routes, with query prefixes such as
// "/occurrences?") list want in full, in one answer, page by page through
// the Link header cursors for every page size, and by page number.
func checkListing(t *testing.T, e *env, arrays, pages []string, query string, want []time.Time) {
	t.Helper()
	for _, base := range append(append([]string{}, arrays...), pages...) {
		require.Equal(t, want, scheduled(t, e.do("GET", base+query, e.master, nil)), "%s%s", base, query)
	}
	for limit := 1; limit <= 7; limit++ {
		for _, base := range append(append([]string{}, arrays...), pages...) {
			got, _ := followLinks(t, e, fmt.Sprintf("%slimit=%d&%s", base, limit, query))
			require.Equal(t, want, got, "%s by cursor, limit %d", base, limit)
		}
		for _, base := range pages {
			var paged []time.Time
			for page := 1; page <= 7; page++ {
				paged = append(paged, scheduled(t, e.do("GET", fmt.Sprintf("%slimit=%d&page=%d&%s", base, limit,
					page, query), e.master, nil))...)
			}
			require.Equal(t, want, paged, "%s by page, limit %d", base, limit)
		}
	}
}

// Without order or from/to, a listing shows the history newest first, then
// what is to come nearest first, and both cursor and page paging walk that
// order across the boundary.
func TestOccurrenceListingShowsHistoryFirst(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			fx := newListingFixture(t, e)
			for _, tc := range listingCases(fx) {
				t.Run(tc.name, func(t *testing.T) {
					checkListing(t, e, []string{"/events/" + fx.eventID + "/occurrences?"},
						[]string{"/occurrences?event_id=" + fx.eventID + "&", "/occurrences?"}, tc.query, tc.want)
				})
			}
		})
	}
}

// The archive follows the same ordering rules as the live listing.
func TestArchivedOccurrenceListingFollowsTheSameOrder(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			fx := newListingFixture(t, e)
			ctx := context.Background()
			now := time.Now()
			_, err := e.store.CancelPendingOccurrences(ctx, fx.eventID, fx.want[2], false, model.ReasonEventDeleted, now)
			require.NoError(t, err)
			// Past every instant of the fixture and the end of their week: on
			// PostgreSQL history is archived a whole week at a time.
			later := now.Add(8 * 24 * time.Hour)
			n, err := e.store.ArchiveOccurrences(ctx, repository.ArchiveBatch{Cutoff: later, Now: later, Limit: 100})
			require.NoError(t, err)
			require.Equal(t, len(fx.want), n.Occurrences)
			fx.status = "cancelled"
			for _, tc := range listingCases(fx) {
				t.Run(tc.name, func(t *testing.T) {
					checkListing(t, e, nil, []string{"/occurrences?archived=true&event_id=" + fx.eventID + "&",
						"/occurrences?archived=true&"}, tc.query, tc.want)
				})
			}
		})
	}
}

// Bad order and cursor values are 400s naming the parameter; a cursor the
// server issued before the default order changed continues newest first.
func TestOccurrenceListingBadOrderAndCursors(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			fx := newListingFixture(t, e)
			enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
			uuidv := "0b7c5d2e-8a51-4f55-9a7b-7e0f0c2b8a11"
			now := time.Now().UnixMicro()
			for _, tc := range []struct{ name, query, field string }{
				{"unknown order", "order=name", "order"},
				{"order without the column", "order=-", "order"},
				{"not base64", "cursor=%25%25", "cursor"},
				{"unknown segment", "cursor=" + enc(fmt.Sprintf("x|%d|%d|%s", now, now, uuidv)), "cursor"},
				{"history past its boundary", "cursor=" + enc(fmt.Sprintf("h|%d|%d|%s", now, now+1, uuidv)), "cursor"},
				{"upcoming before its boundary", "cursor=" + enc(fmt.Sprintf("u|%d|%d|%s", now, now, uuidv)), "cursor"},
				{"boundary out of range", "cursor=" + enc(fmt.Sprintf("h|%d000|%d|%s", now, now, uuidv)), "cursor"},
				{"bad id", "cursor=" + enc(fmt.Sprintf("a|%d|nope", now)), "cursor"},
				{"another order's cursor", "order=scheduled_at&cursor=" + enc(fmt.Sprintf("d|%d|%s", now, uuidv)), "cursor"},
				{"default cursor with an order", "order=-scheduled_at&cursor=" + enc(fmt.Sprintf("h|%d|%d|%s", now, now, uuidv)), "cursor"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					for _, path := range []string{"/events/" + fx.eventID + "/occurrences?", "/occurrences?",
						"/occurrences?archived=true&"} {
						res := e.do("GET", path+tc.query, e.master, nil)
						require.Equal(t, http.StatusBadRequest, res.Status, "%s%s: %s", path, tc.query, res.Body)
						require.Contains(t, res.object(t)["error"], tc.field, "%s%s", path, tc.query)
					}
				})
			}

			// A cursor of the earlier format, "<unix-micro>|<id>" at the newest
			// past row, continues newest first from there.
			newest := scheduled(t, e.do("GET", "/occurrences?order=-scheduled_at&limit=4", e.master, nil))
			var first []struct {
				ID          string    `json:"id"`
				ScheduledAt time.Time `json:"scheduled_at"`
			}
			e.do("GET", "/events/"+fx.eventID+"/occurrences?limit=1", e.master, nil).json(t, &first)
			require.Len(t, first, 1)
			legacy := enc(fmt.Sprintf("%d|%s", first[0].ScheduledAt.UnixMicro(), first[0].ID))
			got := scheduled(t, e.do("GET", "/events/"+fx.eventID+"/occurrences?cursor="+legacy, e.master, nil))
			require.Equal(t, fx.want[1:3], got, "an old cursor pages on newest first")
			require.Equal(t, fx.want[0], newest[3], "fixture: the newest past row is fourth newest")
		})
	}
}

// A deleted event's history stays listable on both routes, under the same
// scope rules; the event itself is 404 unless include_deleted=true.
func TestDeletedEventHistoryStaysListable(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			fx := newListingFixture(t, e, "team-a")
			res := e.do("DELETE", "/events/"+fx.eventID, e.master, nil)
			require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
			inScope := e.mint("read", []string{"team-a"})
			outOfScope := e.mint("read", []string{"team-b"})
			history := fx.want[:3] // the upcoming rows were cancelled, and stay listed too

			for _, tc := range []struct {
				name  string
				token string
				ok    bool
			}{{"master", e.master, true}, {"scoped in", inScope, true}, {"scoped out", outOfScope, false}} {
				t.Run(tc.name, func(t *testing.T) {
					res := e.do("GET", "/events/"+fx.eventID+"/occurrences", tc.token, nil)
					page := e.do("GET", "/occurrences?event_id="+fx.eventID, tc.token, nil)
					if !tc.ok {
						require.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
						require.Empty(t, scheduled(t, page))
						res = e.do("GET", "/events/"+fx.eventID+"?include_deleted=true", tc.token, nil)
						require.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
						return
					}
					got := scheduled(t, res)
					require.Equal(t, history, got[:3], "history newest first")
					require.Len(t, got, len(fx.want))
					require.Equal(t, got, scheduled(t, page), "both routes list the same rows")

					res = e.do("GET", "/events/"+fx.eventID, tc.token, nil)
					require.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
					res = e.do("GET", "/events/"+fx.eventID+"?include_deleted=false", tc.token, nil)
					require.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
					res = e.do("GET", "/events/"+fx.eventID+"?include_deleted=true", tc.token, nil)
					require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
					require.Equal(t, "deleted", res.object(t)["status"])
				})
			}
			res = e.do("GET", "/events/"+fx.eventID+"?include_deleted=yes-please", e.master, nil)
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			require.Contains(t, res.object(t)["error"], "include_deleted")
			res = e.do("GET", "/events/00000000-0000-4000-8000-000000000000/occurrences", e.master, nil)
			require.Equal(t, http.StatusNotFound, res.Status, "an unknown event is still 404")
		})
	}
}

// A cursor the server issued decodes to the position it was issued for;
// anything else is refused (as a 400 by the handler), never a panic.
func FuzzOccurrenceCursor(f *testing.F) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	id := "0b7c5d2e-8a51-4f55-9a7b-7e0f0c2b8a11"
	for _, s := range []string{"h|1795493233888964|1795493233000000|" + id, "u|1795493233888964|1795493300000000|" + id,
		"a|1795493233000000|" + id, "d|1795493233000000|" + id, "1795493233000000|" + id, "h||1|" + id, "x|1|2|3"} {
		f.Add(enc(s))
	}
	f.Add("%%")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodeOccurrenceCursor(s)
		if err != nil {
			return
		}
		last := &model.Occurrence{ID: c.position.ID, ScheduledAt: c.position.ScheduledAt}
		again, err := decodeOccurrenceCursor(encodeOccurrenceCursor(c.order, c.boundary, last))
		if err != nil {
			t.Fatalf("a re-encoded cursor does not decode: %v", err)
		}
		if again != c {
			t.Fatalf("round trip: got %+v, want %+v", again, c)
		}
	})
}
