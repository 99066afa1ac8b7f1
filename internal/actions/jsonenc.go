package actions

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The payload (Payload.Marshal) and the recorded request (SentRequest.JSON)
// are encoded on every attempt, with these helpers. With
// encoding/json's reflection (and its sort of a map's keys by reflection)
// they were 6 % of qhronosd's CPU in a burst (BENCHMARKS.md, "#36: eleventh
// step"); written out by hand they give the same bytes, which
// FuzzJSONStringMatchesEncodingJSON and
// TestPayloadAndRecordedRequestMatchEncodingJSON hold them to.

// appendJSONString appends s as encoding/json writes a string: invalid
// UTF-8 as U+FFFD, U+2028 and U+2029 escaped, and with escapeHTML also <, >
// and &.
func appendJSONString(dst []byte, s string, escapeHTML bool) []byte {
	const hex = "0123456789abcdef"
	safe := &jsonSafe
	if escapeHTML {
		safe = &jsonHTMLSafe
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if safe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonSafe and jsonHTMLSafe tell the ASCII bytes a JSON string holds as
// they are, without and with HTML escaping: a table look-up a byte, as
// encoding/json's own safeSet and htmlSafeSet.
var jsonSafe, jsonHTMLSafe = asciiSafe(false), asciiSafe(true)

func asciiSafe(escapeHTML bool) (t [utf8.RuneSelf]bool) {
	for b := byte(0x20); b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && (!escapeHTML || (b != '<' && b != '>' && b != '&'))
	}
	return t
}

// appendJSONRaw appends raw compacted, as encoding/json writes a
// json.RawMessage (null when empty); it fails on invalid JSON.
func appendJSONRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}

// appendJSONStrings appends ss as a JSON array (null when nil).
func appendJSONStrings(dst []byte, ss []string, escapeHTML bool) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s, escapeHTML)
	}
	return append(dst, ']')
}
