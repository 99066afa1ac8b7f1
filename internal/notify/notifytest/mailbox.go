// Package notifytest gives tests a mailbox: a real SMTP server (go-smtp) on
// loopback that keeps every mail it accepts.
package notifytest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"mime"
	"net"
	"net/http/httptest"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"
)

// Options say what a Mailbox offers and requires. The zero value is a plain
// SMTP server without STARTTLS or authentication.
type Options struct {
	// STARTTLS offers STARTTLS with a certificate for 127.0.0.1 that
	// Mailbox.Roots trusts.
	STARTTLS bool
	// Username and Password, when Username is set, are required through
	// AUTH PLAIN before MAIL FROM.
	Username, Password string
}

// Mail is one message a Mailbox accepted.
type Mail struct {
	From    string
	To      []string
	TLS     bool   // sent over TLS (after STARTTLS)
	Subject string // decoded from RFC 2047 words
	Header  mail.Header
	Body    string // as sent, transfer encoding included
}

// Mailbox is a loopback SMTP server keeping every mail; it stops at the
// test's cleanup.
type Mailbox struct {
	// Addr is the server's host:port.
	Addr string
	// Roots trusts the server's certificate when Options.STARTTLS is set.
	Roots *x509.CertPool

	opts  Options
	mu    sync.Mutex
	mails []Mail
}

// NewMailbox starts a Mailbox on 127.0.0.1.
func NewMailbox(t testing.TB, opts Options) *Mailbox {
	t.Helper()
	mb := &Mailbox{opts: opts}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{mb: mb, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	if opts.STARTTLS {
		// httptest's certificate is valid for 127.0.0.1: borrow it and its pool.
		certSrv := httptest.NewTLSServer(nil)
		srv.TLSConfig = certSrv.TLS.Clone()
		mb.Roots = x509.NewCertPool()
		mb.Roots.AddCert(certSrv.Certificate())
		certSrv.Close()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	mb.Addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return mb
}

// ClientTLS is a client TLS config trusting the server's certificate.
func (mb *Mailbox) ClientTLS() *tls.Config {
	return &tls.Config{RootCAs: mb.Roots, MinVersion: tls.VersionTLS12}
}

// Received lists the mails accepted so far, oldest first.
func (mb *Mailbox) Received() []Mail {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return append([]Mail(nil), mb.mails...)
}

// Subjects lists the subjects of the mails accepted so far.
func (mb *Mailbox) Subjects() []string {
	var out []string
	for _, m := range mb.Received() {
		out = append(out, m.Subject)
	}
	return out
}

// Find returns the first mail whose subject contains substr.
func (mb *Mailbox) Find(substr string) (Mail, bool) {
	for _, m := range mb.Received() {
		if strings.Contains(m.Subject, substr) {
			return m, true
		}
	}
	return Mail{}, false
}

// session is one SMTP connection.
type session struct {
	mb     *Mailbox
	conn   *smtp.Conn
	authed bool
	cur    Mail
}

var _ smtp.AuthSession = (*session)(nil)

// AuthMechanisms offers AUTH PLAIN only when credentials are required;
// without, the server does not advertise AUTH.
func (s *session) AuthMechanisms() []string {
	if s.mb.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(mech string) (sasl.Server, error) {
	if s.mb.opts.Username == "" || mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.mb.opts.Username || pass != s.mb.opts.Password {
			return errors.New("invalid credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.mb.opts.Username != "" && !s.authed {
		return smtp.ErrAuthRequired
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.cur = Mail{From: from, TLS: isTLS}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.cur.To = append(s.cur.To, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(msg.Body)
	if err != nil {
		return err
	}
	s.cur.Header = msg.Header
	s.cur.Subject, _ = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	s.cur.Body = string(body)
	s.mb.mu.Lock()
	s.mb.mails = append(s.mb.mails, s.cur)
	s.mb.mu.Unlock()
	s.cur = Mail{}
	return nil
}

func (s *session) Reset()        { s.cur = Mail{} }
func (s *session) Logout() error { return nil }
