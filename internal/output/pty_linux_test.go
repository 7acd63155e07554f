//go:build linux

package output

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// A real pseudo-terminal is the only honest way to test "colour on a terminal": IsTerminal
// asks the kernel (isatty) about the writer's file descriptor.
func init() { openPTY = openLinuxPTY }

func openLinuxPTY() (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0)
	}
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, s, nil
}
