//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sim

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes a flock on path (created if missing): exclusive for writers, shared for
// readers. flock locks belong to the open file, so a killed process releases its lock
// with its descriptors and can never wedge the harness.
func lockFile(path string, exclusive bool) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sim: open lock: %w", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("sim: flock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
