package client

import (
	"context"
	"iter"
	"net/url"
	"regexp"
)

// Page is one page of a list and the cursor of the next ("" on the last).
type Page[T any] struct {
	Items      []T
	NextCursor string
}

var nextLink = regexp.MustCompile(`<([^>]*)>\s*;\s*rel="?next"?`)

// nextCursor reads the cursor of a Link: <…?cursor=…>; rel="next" header.
func nextCursor(link string) string {
	m := nextLink.FindStringSubmatch(link)
	if m == nil {
		return ""
	}
	u, err := url.Parse(m[1])
	if err != nil {
		return ""
	}
	return u.Query().Get("cursor")
}

// paginate walks pages from fetch, which gets the cursor of the page to
// read ("" for the first), until the last page, an error or the caller stops.
func paginate[T any](ctx context.Context, fetch func(ctx context.Context, cursor string) (*Page[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		cursor := ""
		for {
			page, err := fetch(ctx, cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range page.Items {
				if !yield(item, nil) {
					return
				}
			}
			if page.NextCursor == "" || page.NextCursor == cursor {
				return
			}
			cursor = page.NextCursor
		}
	}
}
