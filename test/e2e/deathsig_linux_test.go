package e2e

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the kernel kill a server when the test process dies
// without running its cleanups (a -timeout panic), instead of orphaning it.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
