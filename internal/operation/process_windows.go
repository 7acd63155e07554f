//go:build windows

package operation

import "os"

// ProcessAlive reports whether a process with pid runs on this host. On Windows
// FindProcess opens the process, which fails when it has exited.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
