package lifecycle

import (
	"bytes"
	"fmt"
	"testing"
)

// TestReapersSayInTheirOrder: the reapers run at once, and what they say comes out in
// their order, as one after the other, whichever finishes first; a reaper that says
// nothing adds nothing.
func TestReapersSayInTheirOrder(t *testing.T) {
	var out bytes.Buffer
	l := &Lifecycle{Deps: Deps{ErrOut: &out}}
	secondDone := make(chan struct{})
	l.reapAtOnce(
		func(r *Lifecycle) {
			<-secondDone // ends after the second: they run at once
			fmt.Fprintln(r.ErrOut, "first")
		},
		func(*Lifecycle) {},
		func(r *Lifecycle) {
			fmt.Fprintln(r.ErrOut, "second")
			close(secondDone)
		},
	)
	if got := out.String(); got != "first\nsecond\n" {
		t.Fatalf("said %q; want the first reaper's line, then the second's", got)
	}
}
