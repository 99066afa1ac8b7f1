package harness

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Network is one scenario's hosts: each instance gets a Linux network
// namespace joined to the host namespace by a veth pair, inside a private
// 10.213.X.0/24 this process holds a lock on. Host i's link is a /30: the
// host side is 10.213.X.(4i+1), the namespace side 10.213.X.(4i+2). A
// namespace has no route but its /30, so instances cannot reach each other:
// everything they share (PostgreSQL, Redis, receivers) is in the host
// namespace behind per-host proxies, and a partition is a link going down
// or a proxy that stops passing data.
type Network struct {
	t      testing.TB
	subnet int
	lock   *os.File
	Hosts  []*Host
}

// Host is one instance's network namespace.
type Host struct {
	Index  int
	NS     string // network namespace name
	Veth   string // host-side end of the link
	HostIP string // the host namespace's address on the link
	IP     string // the instance's own address
}

const (
	lockDir  = "/run/qhronos-partitions"
	nsPrefix = "qhp-"
	// ReceiverHost is the name every instance resolves to its own receiver
	// proxy (ip netns exec bind-mounts /etc/netns/NAME/hosts), so one
	// webhook URL goes through a link per instance.
	ReceiverHost = "receivers.qhp"
)

// Require skips the test when network namespaces cannot be made here
// (not root, no ip(8)); with CI set it fails instead.
func Require(t testing.TB) {
	t.Helper()
	var why string
	switch {
	case os.Geteuid() != 0:
		why = "network namespaces need root"
	default:
		if _, err := exec.LookPath("ip"); err != nil {
			why = "ip(8) not found"
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("partition tests need network namespaces in CI: %s", why)
	}
	t.Skipf("skipping: %s (CI=true makes this a failure)", why)
}

// NewNetwork makes n hosts and removes them at cleanup.
func NewNetwork(t testing.TB, n int) *Network {
	t.Helper()
	Require(t)
	nw := &Network{t: t}
	nw.claimSubnet()
	t.Cleanup(nw.remove)
	for i := range n {
		h := &Host{Index: i, NS: fmt.Sprintf("%s%d-%d", nsPrefix, nw.subnet, i), Veth: fmt.Sprintf("qhp%dh%d", nw.subnet, i),
			HostIP: fmt.Sprintf("10.213.%d.%d", nw.subnet, 4*i+1), IP: fmt.Sprintf("10.213.%d.%d", nw.subnet, 4*i+2)}
		nw.Hosts = append(nw.Hosts, h)
		peer := fmt.Sprintf("qhp%dn%d", nw.subnet, i)
		steps := [][]string{
			{"netns", "add", h.NS},
			{"link", "add", h.Veth, "type", "veth", "peer", "name", peer},
			{"link", "set", peer, "netns", h.NS},
			{"addr", "add", h.HostIP + "/30", "dev", h.Veth},
			{"link", "set", h.Veth, "up"},
			{"-n", h.NS, "addr", "add", h.IP + "/30", "dev", peer},
			{"-n", h.NS, "link", "set", peer, "up"},
			{"-n", h.NS, "link", "set", "lo", "up"},
		}
		for _, s := range steps {
			ipCmd(t, s...)
		}
		dir := filepath.Join("/etc/netns", h.NS)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("netns config dir: %v", err)
		}
		hosts := fmt.Sprintf("127.0.0.1 localhost\n%s %s\n", h.HostIP, ReceiverHost)
		if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte(hosts), 0o644); err != nil {
			t.Fatalf("netns hosts file: %v", err)
		}
	}
	return nw
}

// CIDR is the network's /24, for the outbound allow-list.
func (nw *Network) CIDR() string { return fmt.Sprintf("10.213.%d.0/24", nw.subnet) }

// claimSubnet takes a free 10.213.X.0/24 by an exclusive lock on a file
// named after X. The kernel drops the lock when this process dies, so
// namespaces left under a lock this process could take are stale: a
// killed test run's, removed here before they are reused.
func (nw *Network) claimSubnet() {
	nw.t.Helper()
	if err := os.MkdirAll(lockDir, 0o755); err != nil {
		nw.t.Fatalf("lock dir: %v", err)
	}
	for _, x := range rand.Perm(250) {
		x++
		f, err := os.OpenFile(filepath.Join(lockDir, fmt.Sprintf("%d.lock", x)), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			nw.t.Fatalf("lock subnet: %v", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			continue
		}
		nw.subnet, nw.lock = x, f
		removeStale(x)
		return
	}
	nw.t.Fatal("no free 10.213.X.0/24: 250 subnets held by running tests")
}

// removeStale deletes what a dead run left in subnet x.
func removeStale(x int) {
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), fmt.Sprintf("%s%d-", nsPrefix, x)) {
			_ = exec.Command("ip", "netns", "del", e.Name()).Run()
			_ = os.RemoveAll(filepath.Join("/etc/netns", e.Name()))
		}
	}
	links, _ := os.ReadDir("/sys/class/net")
	for _, l := range links {
		if strings.HasPrefix(l.Name(), fmt.Sprintf("qhp%dh", x)) {
			_ = exec.Command("ip", "link", "del", l.Name()).Run()
		}
	}
}

// remove deletes the namespaces (their veth pairs go with them) and
// releases the subnet.
func (nw *Network) remove() {
	for _, h := range nw.Hosts {
		if out, err := exec.Command("ip", "netns", "del", h.NS).CombinedOutput(); err != nil {
			nw.t.Errorf("ip netns del %s: %v: %s", h.NS, err, out)
		}
		_ = exec.Command("ip", "link", "del", h.Veth).Run() // gone with its peer, normally
		_ = os.RemoveAll(filepath.Join("/etc/netns", h.NS))
	}
	if nw.lock != nil {
		_ = nw.lock.Close()
	}
}

// Down takes the host's link down: every packet to or from the instance
// is dropped, connections hang as across a real partition.
func (h *Host) Down(t testing.TB) { t.Helper(); ipCmd(t, "link", "set", h.Veth, "down") }

// Up brings the link back.
func (h *Host) Up(t testing.TB) { t.Helper(); ipCmd(t, "link", "set", h.Veth, "up") }

// Command runs name inside the host's namespace.
func (h *Host) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

func ipCmd(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		t.Fatalf("ip %s: %v", strings.Join(args, " "), err)
	}
}
