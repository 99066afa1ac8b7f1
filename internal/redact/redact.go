// Package redact is the one rule for sensitive values, applied by API
// answers, history entries, logs and (through the API) the console:
//
//   - every header value;
//   - a URL's userinfo and every query value;
//   - a document member whose name looks like a credential (CredentialName:
//     password, passphrase, secret, token, key, auth, bearer, pin, private,
//     signature, code, cookie, session, jwt, otp …, case-insensitive, at
//     any depth), whatever its value;
//   - a string body that is a form or JSON document carrying such a member.
//
// Such a value is write-only: it is stored and used as given, and shown only
// as its fingerprint, "••••" and 8 hex digits of an HMAC-SHA256 keyed from
// secrets.encryption_key (Fingerprint). The key keeps the fingerprint of a
// short value (a PIN) from being looked up; the same value has the same
// fingerprint on every instance, so a client sees when one changes.
//
// A fingerprint sent back where the answer showed it keeps the stored value
// (Restore), so GET → edit → PUT round trips never overwrite a secret with
// its fingerprint; a fingerprint anywhere else is refused, as is one whose
// destination (the URL it is sent to) changed in the same request.
package redact

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Mask starts every fingerprint.
const Mask = "••••"

// fingerprintPattern matches a whole fingerprint.
var fingerprintPattern = regexp.MustCompile(`^` + Mask + `[0-9a-f]{8}$`)

// IsFingerprint reports whether s is a fingerprint as Fingerprint shows it.
func IsFingerprint(s string) bool { return fingerprintPattern.MatchString(s) }

// HasMask reports whether s holds a fingerprint anywhere (a URL shows them
// inside).
func HasMask(s string) bool { return strings.Contains(s, Mask) }

// credentialWords mark a member (or query parameter, or form field) whose
// value is a credential when its name contains one, case-insensitively
// ("Authorization", "api_key", "clientSecret", "X-Token", "otp_code").
// A substring anywhere counts, deliberately: a name glued together
// ("A0auth0", "xpinx") still hides, at the price of hiding harmless ones
// ("shipping") too — an answer that shows too little is the safe failure.
var credentialWords = []string{"password", "passwd", "passphrase", "pwd", "secret", "token", "key", "auth",
	"bearer", "pin", "private", "signature", "code", "credential", "cookie", "session", "jwt"}

// credentialSegments mark a credential only as a whole word of the name
// (split at punctuation, digits and case changes: "otp", "x-otp",
// "userOTP", "OTPValue"): inside a word they are common English
// ("footprint", "hotpot"), and hiding every such member would hide too
// much to be useful.
var credentialSegments = []string{"otp", "totp", "hotp"}

// CredentialName reports whether a member named name holds a credential.
func CredentialName(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range credentialWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	for _, seg := range segments(name) {
		for _, w := range credentialSegments {
			if strings.EqualFold(seg, w) {
				return true
			}
		}
	}
	return false
}

// segments splits a member name into its words: at every character that
// is not a letter, at letter/digit changes, before an upper-case letter
// after a lower-case one ("userOtp"), and before the last capital of an
// acronym followed by lower case ("OTPValue": "OTP", "Value").
func segments(name string) []string {
	runes := []rune(name)
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, string(runes[start:end]))
		}
		start = -1
	}
	for i, c := range runes {
		if !unicode.IsLetter(c) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := runes[i-1]
		lowerNext := i+1 < len(runes) && unicode.IsLower(runes[i+1])
		if unicode.IsUpper(c) && (unicode.IsLower(prev) || (unicode.IsUpper(prev) && lowerNext)) {
			flush(i)
			start = i
		}
	}
	flush(len(runes))
	return out
}

// headersName reports a member holding HTTP headers: every value is hidden.
func headersName(name string) bool { return strings.Contains(strings.ToLower(name), "header") }

// Redactor applies the rule with one fingerprint key.
type Redactor struct {
	key []byte
}

// New returns a Redactor whose fingerprints are keyed by key (derive it
// from secrets.encryption_key: secrets.Box.FingerprintKey).
func New(key []byte) *Redactor { return &Redactor{key: append([]byte(nil), key...)} }

// Fingerprint is what answers show instead of v.
func (r *Redactor) Fingerprint(v string) string {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(v))
	return Mask + hex.EncodeToString(m.Sum(nil))[:8]
}

// Headers shows every header value as its fingerprint.
func (r *Redactor) Headers(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[k] = r.Fingerprint(v)
	}
	return out
}

// URL shows s with its userinfo and every query value as fingerprints;
// a string that is not an absolute URL is returned as it is. The result is
// for showing: the fingerprints are not escaped.
func (r *Redactor) URL(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return r.Fingerprint(s) // unparsable: nothing of it can be shown safely
	}
	if u.User == nil && u.RawQuery == "" {
		return s
	}
	var b strings.Builder
	b.WriteString(u.Scheme + "://")
	if u.User != nil {
		b.WriteString(r.Fingerprint(u.User.String()) + "@")
	}
	b.WriteString(u.Host)
	b.WriteString(u.EscapedPath())
	if u.RawQuery != "" {
		b.WriteByte('?')
		for i, part := range strings.Split(u.RawQuery, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			name, value, hasValue := strings.Cut(part, "=")
			b.WriteString(name)
			if hasValue {
				b.WriteString("=" + r.Fingerprint(value))
			}
		}
	}
	if u.Fragment != "" {
		b.WriteString("#" + u.EscapedFragment())
	}
	return b.String()
}

// String shows a free string: a URL by URL, a form or JSON document that
// carries a credential whole as its fingerprint, anything else as it is.
func (r *Redactor) String(s string) string {
	if absoluteURL(s) {
		return r.URL(s)
	}
	if credentialText(s) {
		return r.Fingerprint(s)
	}
	return s
}

// absoluteURL reports a string that is one URL (not a document that
// mentions one); URL shows even an unparsable one safely.
func absoluteURL(s string) bool {
	return strings.Contains(s, "://") && !strings.ContainsAny(s, " \n\t\"{}[]")
}

// credentialText reports a string body that is a JSON document with a
// credential member at any depth, or a form with a credential field.
func credentialText(s string) bool {
	t := strings.TrimSpace(s)
	if t == "" {
		return false
	}
	if t[0] == '{' || t[0] == '[' {
		var v any
		if json.Unmarshal([]byte(t), &v) == nil {
			return hasCredential(v)
		}
	}
	if strings.Contains(t, "=") && !strings.ContainsAny(t, " \n\t") {
		if q, err := url.ParseQuery(t); err == nil {
			for k := range q {
				if CredentialName(k) {
					return true
				}
			}
		}
	}
	return false
}

func hasCredential(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if CredentialName(k) || hasCredential(val) {
				return true
			}
		}
	case []any:
		for _, val := range t {
			if hasCredential(val) {
				return true
			}
		}
	case string:
		return credentialText(t)
	}
	return false
}

// Document shows a decoded JSON document (numbers as json.Number or
// float64) by the rule: credential members and header values as
// fingerprints, strings by String.
func (r *Redactor) Document(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			switch {
			case CredentialName(k) && val != nil:
				out[k] = r.Fingerprint(canonical(val))
			case headersName(k):
				out[k] = r.headerValues(val)
			default:
				out[k] = r.Document(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = r.Document(val)
		}
		return out
	case string:
		return r.String(t)
	default:
		return v
	}
}

// headerValues hides every value of a headers object; headers in any other
// shape hide whole.
func (r *Redactor) headerValues(v any) any {
	h, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return nil
		}
		return r.Fingerprint(canonical(v))
	}
	out := make(map[string]any, len(h))
	for k, val := range h {
		out[k] = r.Fingerprint(canonical(val))
	}
	return out
}

// canonical is the text a value's fingerprint is taken of: a string
// itself, anything else its compact JSON.
func canonical(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// JSON shows a JSON document by Document; a document that is not JSON
// shows whole as its fingerprint, an empty one as it is.
func (r *Redactor) JSON(raw json.RawMessage) json.RawMessage {
	v, ok := DecodeDocument(raw)
	if !ok {
		if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return raw
		}
		b, _ := json.Marshal(r.Fingerprint(string(raw)))
		return b
	}
	b, err := json.Marshal(r.Document(v))
	if err != nil {
		return raw
	}
	return b
}

// DecodeDocument reads a document keeping numbers as written; false when it
// is empty, null or not JSON.
func DecodeDocument(raw json.RawMessage) (any, bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || v == nil {
		return nil, false
	}
	return v, true
}

// sortedKeys are m's keys in order, for stable error fields.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
