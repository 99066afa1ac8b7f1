package actions

import (
	"compress/gzip"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// readExcerpt reads at most limit bytes of a response body and stops there:
// the rest is never drained (closing the body drops the connection). A gzip
// body is decoded with the same bound on both sides — at most limit
// compressed bytes read and at most limit decoded bytes kept — so a gzip bomb
// cannot inflate memory. truncated reports that more was there (or that the
// body ended early because a deadline or the compressed bound cut it). The
// excerpt is valid UTF-8 without NUL, ready for a text column.
func readExcerpt(body io.Reader, contentEncoding string, limit int) (excerpt string, truncated bool) {
	raw := &countingReader{r: io.LimitReader(body, int64(limit)+1)}
	var src io.Reader = raw
	if strings.EqualFold(strings.TrimSpace(contentEncoding), "gzip") {
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return "", raw.n > 0
		}
		defer zr.Close()
		src = zr
	}
	// Small at first: most receivers answer a few bytes, and this runs for
	// every delivery; readUpTo grows it for a longer body. sanitize copies
	// what is kept, so a small buffer goes back for the next attempt.
	pooled := excerptBuffers.Get().(*[]byte)
	buf, err := readUpTo(src, (*pooled)[:0], limit+1)
	if cap(buf) == smallExcerpt {
		defer excerptBuffers.Put(pooled)
	}
	if len(buf) > limit {
		buf, truncated = buf[:limit], true
	}
	if err != nil && err != io.EOF {
		truncated = true // cut by a deadline, a reset or the compressed bound
	}
	if raw.n > int64(limit) {
		truncated = true
	}
	text := sanitize(buf)
	if len(text) > limit {
		// Replacement characters are wider than the bytes they replace.
		text, truncated = cutAtRune(text, limit), true
	}
	return text, truncated
}

// smallExcerpt is the size of the buffers readExcerpt starts with and keeps.
const smallExcerpt = 512

var excerptBuffers = sync.Pool{New: func() any { b := make([]byte, 0, smallExcerpt); return &b }}

// cutAtRune returns the longest prefix of s of at most n bytes that ends on
// a rune boundary.
func cutAtRune(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// readUpTo appends from r until n bytes, EOF or an error.
func readUpTo(r io.Reader, buf []byte, n int) ([]byte, error) {
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := r.Read(buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

func sanitize(b []byte) string {
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
