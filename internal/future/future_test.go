package future

import (
	"errors"
	"testing"
)

// The answer is the read's, given to every caller, and the read runs before it is asked.
func TestStart(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	boom := errors.New("boom")
	get := Start(func() (int, error) {
		close(started)
		<-release
		return 7, boom
	})
	<-started // runs without being asked
	close(release)
	for i := 0; i < 2; i++ {
		if v, err := get(); v != 7 || !errors.Is(err, boom) {
			t.Fatalf("call %d: %d, %v; want 7, boom", i, v, err)
		}
	}
}
