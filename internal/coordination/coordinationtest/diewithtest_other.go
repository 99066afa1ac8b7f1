//go:build !linux

package coordinationtest

import "os/exec"

// DieWithTest does nothing where the kernel offers no parent-death signal;
// a test process killed before its cleanups leaves the server running.
func DieWithTest(*exec.Cmd) {}
