// Package future runs a read in the background while the caller does other work, and
// hands its answer over when asked: the plugin overlaps its API and nodetool reads this
// way (planning, status, scale's checks) instead of making them one after the other.
package future

// Start runs read at once in its own goroutine and returns what waits for its answer
// (as often as asked: every call returns the same answer).
func Start[T any](read func() (T, error)) func() (T, error) {
	var (
		v    T
		err  error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		v, err = read()
	}()
	return func() (T, error) {
		<-done
		return v, err
	}
}
