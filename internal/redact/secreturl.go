package redact

import (
	"net/url"
	"strings"
)

// SecretURL shows a URL that is itself a credential — a notification
// channel's: a Slack or Teams webhook URL's path is its secret, others
// carry ?token= — by where it goes only: its scheme and host, and
// everything after (userinfo, path, query, fragment) as one fingerprint of
// the whole URL ("https://hooks.slack.com/••••a1b2c3d4"). A URL with
// nothing after its host shows as it is; one that cannot be parsed shows
// whole as its fingerprint.
func (r *Redactor) SecretURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		if s == "" {
			return s
		}
		return r.Fingerprint(s)
	}
	if u.User == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" {
		return s
	}
	return u.Scheme + "://" + u.Host + "/" + r.Fingerprint(s)
}

// RestoreSecretURL puts back the stored URL behind sent when sent is the
// SecretURL of stored, so a client that sends an answer back keeps the
// URL. A sent URL with a fingerprint that stands for no stored URL is
// refused, and so is the stored one's fingerprint under another scheme or
// host (Moved): its path and query must not follow a new destination.
func (r *Redactor) RestoreSecretURL(field, sent, stored string) (string, error) {
	if !HasMask(sent) {
		return sent, nil
	}
	shown := r.SecretURL(stored)
	if stored != "" && sent == shown {
		return stored, nil
	}
	if stored != "" && HasMask(shown) {
		_, fp, _ := strings.Cut(shown, Mask)
		if strings.HasSuffix(sent, Mask+fp) {
			return "", &RestoreError{Field: field, Moved: true}
		}
	}
	return "", &RestoreError{Field: field}
}
