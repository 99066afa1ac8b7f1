package coordinationtest

import (
	"os/exec"
	"syscall"
)

// DieWithTest makes the kernel kill a process a test started (a
// redis-server, a qhronosd) when the test process dies without running its
// cleanups (a -timeout panic, a SIGKILL): otherwise the process is orphaned
// and keeps its port. (The signal follows the OS thread that started it; the
// Go runtime keeps its threads alive, which is enough for a test helper.)
func DieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
