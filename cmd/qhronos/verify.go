package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/receiver"
)

func newVerifyCmd(a *app) *cobra.Command {
	var secrets, keyFiles []string
	var tolerance time.Duration
	cmd := &cobra.Command{
		Use:   "verify [FILE]",
		Short: "Check the signature of a saved request (headers and body)",
		Long: `verify reads one saved HTTP request — as a raw request ("POST /hooks HTTP/1.1", headers, a blank
line, the body), or just headers, a blank line and the body — from FILE or standard input,
and says whether its signatures hold for the secret and whether its timestamp is fresh.

The secret comes from --secret (repeat it during a rotation) or QHRONOS_WEBHOOK_SECRET.
"whsec_" secrets are base64-decoded; any other secret is used as its bytes, as the server
does. Exit code 0 when the request verifies, 1 when it does not.

An encrypted delivery (Content-Type application/jose: the event's action carries the
receiver's encryption_jwk) is verified as sent, then opened with --private-key (a PEM or
JWK file; repeat it during a key rotation) and its payload is shown.`,
		Example: `  qhronos verify --secret "$SECRET" request.txt
  pbpaste | qhronos verify --secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
  qhronos verify --secret "$SECRET" --tolerance 0 old-capture.txt   # ignore the message's age
  qhronos verify --secret "$SECRET" --private-key receiver-key.pem encrypted.txt`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("verify takes at most one FILE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(secrets) == 0 {
				if s := a.getenv("QHRONOS_WEBHOOK_SECRET"); s != "" {
					secrets = []string{s}
				}
			}
			if len(secrets) == 0 {
				return usagef("--secret: required (or QHRONOS_WEBHOOK_SECRET)")
			}
			in := a.stdin
			if len(args) == 1 && args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return usagef("FILE: %v", err)
				}
				defer f.Close()
				in = f
			}
			header, body, err := readSavedRequest(in)
			if err != nil {
				return usagef("request: %v", err)
			}
			// A saved file often ends with a newline the body did not have:
			// without a Content-Length, try the body without it too.
			if header.Get("Content-Length") == "" && bytes.HasSuffix(body, []byte("\n")) {
				trimmed := bytes.TrimSuffix(bytes.TrimSuffix(body, []byte("\n")), []byte("\r"))
				v := receiver.NewVerifier(secrets, receiver.WithTolerance(0), receiver.WithLegacy())
				if v.Verify(header, body) != nil && v.Verify(header, trimmed) == nil {
					body = trimmed
				}
			}
			var keys []receiver.PrivateKey
			for _, name := range keyFiles {
				raw, err := os.ReadFile(name)
				if err != nil {
					return usagef("--private-key: %v", err)
				}
				k, err := receiver.ParsePrivateKey(raw)
				if err != nil {
					return usagef("--private-key %s: %v", name, err)
				}
				keys = append(keys, k)
			}
			return a.reportVerification(secrets, tolerance, header, body, keys...)
		},
	}
	cmd.Flags().StringArrayVar(&secrets, "secret", nil, "signing secret (repeat for both secrets of a rotation)")
	cmd.Flags().DurationVar(&tolerance, "tolerance", receiver.DefaultTolerance, "how old (or early) a timestamp may be; 0 ignores it")
	cmd.Flags().StringArrayVar(&keyFiles, "private-key", nil, "PEM or JWK file of the receiver's private key, to open an encrypted delivery (repeat during a rotation)")
	return cmd
}

// verification is the --output json answer of verify.
type verification struct {
	Valid     bool   `json:"valid"`
	Signature string `json:"signature"`
	Timestamp string `json:"timestamp"`
	ID        string `json:"webhook_id,omitempty"`
	Error     string `json:"error,omitempty"`
	// Encrypted says the body is a JWE; Payload is what it opened to
	// with --private-key.
	Encrypted bool            `json:"encrypted,omitempty"`
	Payload   json.RawMessage `json:"payload,omitempty"`
}

func (a *app) reportVerification(secrets []string, tolerance time.Duration, h http.Header, body []byte, keys ...receiver.PrivateKey) error {
	v := verification{ID: h.Get(receiver.HeaderWebhookID)}
	sigErr := receiver.NewVerifier(secrets, receiver.WithTolerance(0), receiver.WithLegacy()).Verify(h, body)
	fullErr := receiver.NewVerifier(secrets, receiver.WithTolerance(tolerance), receiver.WithLegacy()).Verify(h, body)
	switch {
	case sigErr != nil:
		v.Signature = "invalid: " + sigErr.Error()
	case h.Get(receiver.HeaderWebhookSignature) == "":
		v.Signature = "valid (X-Qhronos-Signature only: no timestamp, no replay protection)"
	default:
		v.Signature = "valid (webhook-signature)"
	}
	if ts, err := strconv.ParseInt(h.Get(receiver.HeaderWebhookTimestamp), 10, 64); err == nil {
		at := time.Unix(ts, 0).UTC()
		v.Timestamp = fmt.Sprintf("%s (%s ago)", at.Format(time.RFC3339), time.Since(at).Round(time.Second))
		if errors.Is(fullErr, receiver.ErrTooOld) || errors.Is(fullErr, receiver.ErrTooNew) {
			v.Timestamp += fmt.Sprintf(": outside the %s tolerance, a receiver would refuse it", tolerance)
		}
	} else {
		v.Timestamp = "-"
	}
	v.Valid = fullErr == nil
	if fullErr != nil {
		v.Error = fullErr.Error()
	}
	payload := "-"
	if v.Encrypted = receiver.IsEncrypted(h); v.Encrypted {
		switch plain, err := receiver.Decrypt(body, keys...); {
		case err != nil && len(keys) == 0:
			payload = "encrypted (give --private-key to open it)"
		case err != nil:
			payload = "not opened: " + err.Error()
			if v.Valid {
				v.Valid, v.Error = false, err.Error()
			}
		case json.Valid(plain):
			v.Payload, payload = plain, string(plain)
		default:
			payload = fmt.Sprintf("opened (%d bytes, not JSON)", len(plain))
		}
	}
	verdict := "VALID"
	if !v.Valid {
		verdict = "NOT VALID"
	}
	kv := []string{"result", verdict, "signature", v.Signature, "timestamp", v.Timestamp, "webhook-id", v.ID}
	if v.Encrypted {
		kv = append(kv, "payload", payload)
	}
	t := fields(kv...)
	if err := a.render(v, t); err != nil {
		return err
	}
	if !v.Valid {
		return fmt.Errorf("verification failed: %s", v.Error)
	}
	return nil
}

// readSavedRequest parses a raw HTTP request, or headers, a blank line and
// the body.
func readSavedRequest(r io.Reader) (http.Header, []byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, 8<<20))
	if err != nil {
		return nil, nil, err
	}
	head, body, found := splitHead(raw)
	if !found {
		return nil, nil, errors.New("no blank line between the headers and the body")
	}
	head = bytes.ReplaceAll(head, []byte("\r\n"), []byte("\n"))
	first, _, _ := strings.Cut(string(head), "\n")
	if !strings.Contains(first, "HTTP/") {
		head = append([]byte("POST / HTTP/1.1\n"), head...)
	}
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(head, '\n', '\n'))))
	if _, err := tp.ReadLine(); err != nil {
		return nil, nil, err
	}
	mh, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, nil, fmt.Errorf("headers: %w", err)
	}
	h := http.Header(mh)
	if n, err := strconv.Atoi(h.Get("Content-Length")); err == nil && n >= 0 && n <= len(body) {
		body = body[:n]
	}
	return h, body, nil
}

// splitHead cuts at the first blank line (CRLF or LF); the body is kept
// byte for byte, since the signature covers it.
func splitHead(raw []byte) (head, body []byte, found bool) {
	crlf, lf := bytes.Index(raw, []byte("\r\n\r\n")), bytes.Index(raw, []byte("\n\n"))
	switch {
	case crlf >= 0 && (lf < 0 || crlf < lf):
		return raw[:crlf], raw[crlf+4:], true
	case lf >= 0:
		return raw[:lf], raw[lf+2:], true
	}
	return nil, nil, false
}
