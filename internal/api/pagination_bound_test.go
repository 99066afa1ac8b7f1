package api

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// occurrencePageJSON is the {"data","pagination"} envelope; pointer fields
// tell an absent member from a zero one.
type occurrencePageJSON struct {
	Data []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"data"`
	Pagination struct {
		Page              *int    `json:"page"`
		Limit             int     `json:"limit"`
		Total             *int    `json:"total"`
		TotalIsLowerBound *bool   `json:"total_is_lower_bound"`
		NextCursor        *string `json:"next_cursor"`
	} `json:"pagination"`
}

func (e *env) occurrencePage(t *testing.T, query url.Values) occurrencePageJSON {
	t.Helper()
	res := e.do("GET", "/occurrences?"+query.Encode(), e.master, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var page occurrencePageJSON
	res.json(t, &page)
	return page
}

// TestCursorPagesWalkAFilteredListingOnce: following next_cursor through
// status=completed yields every completed row once and nothing else, with
// no total on the cursor pages; the page-based walk agrees and carries the
// exact total while it is under the bound.
func TestCursorPagesWalkAFilteredListingOnce(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			ctx := context.Background()
			id := e.createEvent(e.master, eventBody("a"))["id"].(string)
			now := time.Now().UTC().Truncate(time.Second)
			var at []time.Time
			for i := range 40 {
				at = append(at, now.Add(-time.Duration(i+1)*time.Minute))
			}
			_, err := e.store.InsertOccurrences(ctx, id, at, false, now.Add(-time.Hour))
			require.NoError(t, err)
			claimed, err := e.store.ClaimDue(ctx, repository.ClaimRequest{Now: now.Add(-15 * time.Minute), Limit: 100,
				Token: "tok", LeaseUntil: now.Add(time.Minute)})
			require.NoError(t, err)
			require.Len(t, claimed, 26, "the rows due 15 minutes ago")
			want := map[string]bool{}
			var recs []repository.OutcomeRecord
			for _, o := range claimed {
				if o.EventID != id {
					continue
				}
				want[o.ID] = true
				recs = append(recs, repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok",
					Status: model.OccurrenceCompleted, Now: now})
			}
			res, err := e.store.RecordOutcomes(ctx, recs)
			require.NoError(t, err)
			for _, r := range res {
				require.NoError(t, r)
			}
			require.Len(t, want, 26)

			q := url.Values{"event_id": {id}, "status": {"completed"}, "limit": {"7"}}
			seen := map[string]bool{}
			first := e.occurrencePage(t, q)
			require.NotNil(t, first.Pagination.Total, "the first page keeps the original's total")
			require.Equal(t, 26, *first.Pagination.Total)
			require.False(t, *first.Pagination.TotalIsLowerBound)
			page := first
			for pages := 1; ; pages++ {
				require.LessOrEqual(t, pages, 4)
				for _, o := range page.Data {
					require.Equal(t, "completed", o.Status)
					require.False(t, seen[o.ID], "row %s listed twice", o.ID)
					seen[o.ID] = true
				}
				if page.Pagination.NextCursor == nil {
					break
				}
				q.Set("cursor", *page.Pagination.NextCursor)
				page = e.occurrencePage(t, q)
				require.Nil(t, page.Pagination.Total, "cursor pages carry no total")
				require.Nil(t, page.Pagination.Page)
			}
			require.Equal(t, want, seen)

			q.Del("cursor")
			byPage := map[string]bool{}
			for n := 1; n <= 4; n++ {
				q.Set("page", string(rune('0'+n)))
				p := e.occurrencePage(t, q)
				require.Equal(t, n, *p.Pagination.Page)
				require.Equal(t, 26, *p.Pagination.Total)
				for _, o := range p.Data {
					require.False(t, byPage[o.ID], "row %s on two pages", o.ID)
					byPage[o.ID] = true
				}
			}
			require.Equal(t, want, byPage)
		})
	}
}

// TestPageTotalIsBounded: past 10,000 matching rows the page-based form
// says 10,000 and total_is_lower_bound instead of counting the history.
func TestPageTotalIsBounded(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			ctx := context.Background()
			id := e.createEvent(e.master, eventBody("a"))["id"].(string)
			now := time.Now().UTC().Truncate(time.Second)
			for chunk := range 11 {
				at := make([]time.Time, 0, 1000)
				for i := range 1000 {
					at = append(at, now.Add(-time.Duration(chunk*1000+i+1)*time.Second))
				}
				_, err := e.store.InsertOccurrences(ctx, id, at, false, now.Add(-24*time.Hour))
				require.NoError(t, err)
			}
			for _, q := range []url.Values{{"event_id": {id}}, {"event_id": {id}, "page": {"3"}, "limit": {"20"}},
				{"event_id": {id}, "status": {"pending"}}} {
				p := e.occurrencePage(t, q)
				require.Equal(t, maxCountedTotal, *p.Pagination.Total, "%v", q)
				require.True(t, *p.Pagination.TotalIsLowerBound, "%v", q)
				require.NotNil(t, p.Pagination.NextCursor)
			}
			q := url.Values{"event_id": {id}, "status": {"completed"}}
			p := e.occurrencePage(t, q)
			require.Zero(t, *p.Pagination.Total)
			require.False(t, *p.Pagination.TotalIsLowerBound)
		})
	}
}
