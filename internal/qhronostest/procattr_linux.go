package qhronostest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the server get SIGKILL when the test process dies
// without running its cleanups (a panic, a timeout, a kill), so no server
// outlives its test on a shared machine.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
