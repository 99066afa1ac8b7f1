//go:build !linux

package coordinationtest

import "os/exec"

// dieWithTest does nothing where the kernel offers no parent-death signal;
// a test process killed before its cleanups leaves the server running.
func dieWithTest(*exec.Cmd) {}
