package coordinationtest

import (
	"net"
	"testing"
)

// BlackHoleAddr is a loopback address that accepts TCP connections and never
// answers: how a partitioned or frozen Redis looks to a client (a stopped one
// refuses at once, which is the easy case). Closed at cleanup.
func BlackHoleAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen for a black hole: %v", err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	return ln.Addr().String()
}
