package brokertest

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards a loopback port to a broker (or any TCP server) and can
// turn the path bad, so a test sees the broker go away and come back at the
// same address without rebooting it (RabbitMQ takes seconds to boot), stop
// answering, or answer one byte a second.
type Proxy struct {
	Port   int
	target string

	mu sync.Mutex
	ln net.Listener
	// conns are the open connections, both sides of each forwarded one;
	// a wedged connection passes nothing more either way.
	conns       map[net.Conn]*atomic.Bool
	mode        proxyMode
	script      string
	serverFirst bool
	wg          sync.WaitGroup
}

type proxyMode int

const (
	forwarding proxyMode = iota
	stalled              // accept and never answer
	trickling            // answer the script one byte a second, never reach the broker
)

// NewProxy starts a proxy to target (host:port), closed at cleanup.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p := &Proxy{target: target, conns: map[net.Conn]*atomic.Bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p.Port = ln.Addr().(*net.TCPAddr).Port
	p.serve(ln)
	t.Cleanup(func() { p.Cut(); p.wg.Wait() })
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return "127.0.0.1:" + strconv.Itoa(p.Port) }

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.handle(ln, c)
		}
	}()
}

// handle serves one accepted connection as the proxy's mode says.
func (p *Proxy) handle(ln net.Listener, c net.Conn) {
	wedged := &atomic.Bool{}
	p.mu.Lock()
	mode, script, serverFirst := p.mode, p.script, p.serverFirst
	if p.ln != ln {
		// Cut while this connection was being accepted.
		p.mu.Unlock()
		_ = c.Close()
		return
	}
	p.conns[c] = wedged
	p.mu.Unlock()
	switch mode {
	case stalled:
		p.wg.Add(1)
		go p.drain(c, "", false)
	case trickling:
		p.wg.Add(1)
		go p.drain(c, script, serverFirst)
	default:
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			return
		}
		p.mu.Lock()
		p.conns[up] = wedged
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(up, c, wedged)
		go p.pipe(c, up, wedged)
	}
}

// pipe copies src to dst until either closes; once wedged it reads on and
// passes nothing.
func (p *Proxy) pipe(dst, src net.Conn, wedged *atomic.Bool) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !wedged.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = dst.Close()
	_ = src.Close()
}

// drain reads and discards whatever c sends until it closes, a peer that
// never answers, and writes script to it one byte a second: from the start
// when the server speaks first, else once the client spoke.
func (p *Proxy) drain(c net.Conn, script string, serverFirst bool) {
	defer p.wg.Done()
	defer c.Close()
	spoke, closed := make(chan struct{}), make(chan struct{})
	if serverFirst {
		close(spoke)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(closed)
		buf, heard := make([]byte, 4<<10), serverFirst
		for {
			n, err := c.Read(buf)
			if n > 0 && !heard {
				close(spoke)
				heard = true
			}
			if err != nil {
				return
			}
		}
	}()
	if script != "" {
		select {
		case <-spoke:
		case <-closed:
			return
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := range len(script) {
		if _, err := c.Write([]byte{script[i]}); err != nil {
			break
		}
		select {
		case <-tick.C:
		case <-closed:
			return
		}
	}
	<-closed
}

func (p *Proxy) setMode(m proxyMode, script string, serverFirst bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode, p.script, p.serverFirst = m, script, serverFirst
	if m != forwarding {
		for _, w := range p.conns {
			w.Store(true)
		}
	}
}

// Stall makes the broker stop answering: open connections pass nothing
// more either way, and new ones are accepted and never answered.
func (p *Proxy) Stall() { p.setMode(stalled, "", false) }

// Trickle makes new connections get script one byte a second and never
// reach the broker (a slow loris); open connections are stalled. The
// script starts once the client spoke, or at once with serverFirst (a
// protocol whose server greets first, as NATS's does).
func (p *Proxy) Trickle(script string, serverFirst bool) {
	p.setMode(trickling, script, serverFirst)
}

// Resume forwards new connections to the broker again. Stalled ones stay
// stalled, as a client's connection to a wedged broker does.
func (p *Proxy) Resume() { p.setMode(forwarding, "", false) }

// Cut stops accepting and drops every connection: the broker is gone.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]*atomic.Bool{}
}

// Restore accepts again on the same port: the broker is back.
func (p *Proxy) Restore(t testing.TB) {
	t.Helper()
	var ln net.Listener
	var err error
	WaitFor(t, "the proxy port to listen again", func() bool {
		ln, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p.Port))
		return err == nil
	})
	p.serve(ln)
}
