package api

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/qhronos/qhronos/internal/input"
)

// Text every backend can store: JSON must be UTF-8 (RFC 8259), and neither
// PostgreSQL text nor jsonb accepts NUL or an unpaired UTF-16 surrogate
// escape. encoding/json would quietly turn invalid bytes into U+FFFD in Go
// strings but keeps them in raw members (metadata, action params), so the
// raw body is checked before anything is decoded or stored.
const textRule = "must be valid UTF-8 text without \\u0000 or unpaired surrogate escapes"

// badText returns a 400 naming the first member of a request object whose
// text cannot be stored, or nil.
func badText(members map[string]json.RawMessage) error {
	for _, k := range slices.Sorted(maps.Keys(members)) {
		if path, ok := textProblem(members[k]); ok {
			return input.BadRequest(k+path, textRule)
		}
	}
	return nil
}

// textProblem reports whether raw (valid JSON) holds unstorable text and,
// when it sits inside an object or array, the path to it (".a.b", "[3]").
func textProblem(raw json.RawMessage) (string, bool) {
	if textOK(raw) {
		return "", false
	}
	switch v := bytes.TrimSpace(raw); {
	case len(v) > 0 && v[0] == '{':
		var m map[string]json.RawMessage
		if json.Unmarshal(v, &m) == nil {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if sub, ok := textProblem(m[k]); ok {
					return "." + k + sub, true
				}
			}
		}
	case len(v) > 0 && v[0] == '[':
		var a []json.RawMessage
		if json.Unmarshal(v, &a) == nil {
			for i, e := range a {
				if sub, ok := textProblem(e); ok {
					return "[" + strconv.Itoa(i) + "]" + sub, true
				}
			}
		}
	}
	return "", true // the problem is here (or in a key)
}

// textOK checks raw JSON bytes: valid UTF-8, and every \u escape neither
// NUL nor half of a surrogate pair. In valid JSON a backslash only occurs
// inside strings, so no string tracking is needed.
func textOK(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // \" \\ \/ \b \f \n \r \t
			continue
		}
		r, ok := hex4(raw, i+2)
		if !ok {
			return false
		}
		i += 5
		switch {
		case r == 0:
			return false
		case r >= 0xDC00 && r <= 0xDFFF:
			return false // a low surrogate with no high one before it
		case r >= 0xD800 && r <= 0xDBFF:
			low, ok := uint16(0), i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u'
			if ok {
				low, ok = hex4(raw, i+3)
			}
			if !ok || low < 0xDC00 || low > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

func hex4(b []byte, at int) (uint16, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[at:at+4]), 16, 16)
	return uint16(v), err == nil
}
