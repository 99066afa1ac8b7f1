package coordinationtest

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the kernel kill the server when the test process dies
// without running its cleanups (a -timeout panic, a SIGKILL): otherwise the
// redis-server is orphaned and keeps its port. (The signal follows the OS
// thread that started it; the Go runtime keeps its threads alive, which is
// enough for a test helper.)
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
