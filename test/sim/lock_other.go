//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sim

import "errors"

// lockFile is unsupported here: file stores need flock; memory stores still work.
func lockFile(string, bool) (func(), error) {
	return nil, errors.New("sim: file stores need flock (Linux or BSD)")
}
