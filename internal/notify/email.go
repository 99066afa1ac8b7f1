package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"strings"
	"time"

	"github.com/google/uuid"
)

// SMTP is the mail server email channels send through.
type SMTP struct {
	Addr     string // host:port
	Username string // empty: no authentication
	Password string
	From     string
	// TLS is "starttls" (required), "tls" (implicit) or "none" (STARTTLS
	// only when offered).
	TLS string
	// TLSConfig overrides the TLS settings (tests trust a local CA).
	TLSConfig *tls.Config
	// Timeout bounds one whole exchange (default 30 s).
	Timeout time.Duration
}

// String keeps the password out of logs.
func (s SMTP) String() string { return fmt.Sprintf("smtp %s (tls %s)", s.Addr, s.TLS) }

// GoString keeps the password out of %#v output.
func (s SMTP) GoString() string { return s.String() }

// emailSender mails notices as plain text.
type emailSender struct {
	cfg SMTP
	now func() time.Time
}

var errNoSMTP = errors.New("no mail server configured (notifications.smtp.addr)")

// send answers the mail server's acceptance when it took the message.
func (e *emailSender) send(ctx context.Context, ch Channel, m message) (string, error) {
	if err := e.exchange(ctx, ch, m); err != nil {
		return "", err
	}
	// Closing the DATA writer succeeds only on the server's 250.
	return fmt.Sprintf("250 accepted for %d recipient(s)", len(ch.To)), nil
}

func (e *emailSender) exchange(ctx context.Context, ch Channel, m message) error {
	if e.cfg.Addr == "" {
		return errNoSMTP
	}
	host, _, err := net.SplitHostPort(e.cfg.Addr)
	if err != nil {
		return fmt.Errorf("smtp address %q: %w", e.cfg.Addr, err)
	}
	timeout := e.cfg.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tlsCfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if e.cfg.TLSConfig != nil {
		tlsCfg = e.cfg.TLSConfig.Clone()
		if tlsCfg.ServerName == "" {
			tlsCfg.ServerName = host
		}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", e.cfg.Addr)
	if err != nil {
		return fmt.Errorf("connect to mail server: %w", err)
	}
	// The deadline bounds the whole SMTP exchange; net/smtp takes no context.
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	if e.cfg.TLS == "tls" {
		conn = tls.Client(conn, tlsCfg)
	}
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		_ = conn.Close()
		return fmt.Errorf("greet mail server: %w", err)
	}
	defer func() { _ = c.Close() }()
	if e.cfg.TLS != "tls" {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsCfg); err != nil {
				return fmt.Errorf("starttls: %w", err)
			}
		} else if e.cfg.TLS == "starttls" {
			return errors.New("the mail server does not offer STARTTLS (notifications.smtp.tls is starttls)")
		}
	}
	if e.cfg.Username != "" {
		// PlainAuth refuses to send the password unencrypted except to
		// localhost.
		if err := c.Auth(smtp.PlainAuth("", e.cfg.Username, e.cfg.Password, host)); err != nil {
			return fmt.Errorf("smtp auth: %w", err)
		}
	}
	if err := c.Mail(e.cfg.From); err != nil {
		return fmt.Errorf("smtp MAIL FROM: %w", err)
	}
	for _, to := range ch.To {
		if err := c.Rcpt(to); err != nil {
			return fmt.Errorf("smtp RCPT TO %s: %w", to, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("smtp DATA: %w", err)
	}
	if _, err := w.Write(e.compose(ch, m, host)); err != nil {
		return fmt.Errorf("smtp write message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp end message: %w", err)
	}
	return c.Quit()
}

// compose writes a plain-text mail with a clear subject.
func (e *emailSender) compose(ch Channel, m message, host string) []byte {
	var b bytes.Buffer
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", e.cfg.From)
	header("To", strings.Join(ch.To, ", "))
	header("Subject", mime.QEncoding.Encode("utf-8", "[Qhronos] "+m.Subject))
	header("Date", e.now().UTC().Format(time.RFC1123Z))
	header("Message-ID", "<"+uuid.NewString()+"@"+host+">")
	header("X-Qhronos-Notice", string(m.Kind))
	header("X-Qhronos-Notice-ID", m.ID)
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	text := m.Text
	if text == "" {
		text = m.Subject
	}
	_, _ = qp.Write([]byte(strings.ReplaceAll(text, "\n", "\r\n")))
	_, _ = qp.Write([]byte("\r\n\r\n-- \r\nSent by Qhronos (" + string(m.Kind) + ", " +
		m.At.Format(time.RFC3339) + ")\r\n"))
	_ = qp.Close()
	return b.Bytes()
}
