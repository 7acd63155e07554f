package operation

import (
	"os"
	"runtime"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestHolderAlive: our own process is alive with its start time, and not with another
// (its PID reused by a later process, as a container restarted in place would).
func TestHolderAlive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process start times come from /proc")
	}
	self := Self()
	if self.Machine == "" || self.ProcessStart == "" || self.ProcessStart != ProcessStart(os.Getpid()) {
		t.Fatalf("identity without machine or start time: %+v", self)
	}
	if !HolderAlive(self) {
		t.Fatal("this process is not alive")
	}
	reused := self
	reused.ProcessStart = "1"
	if HolderAlive(reused) {
		t.Fatal("a PID with another start time is taken for the holder")
	}
	if HolderAlive(record.Holder{PID: -1}) {
		t.Fatal("PID -1 is alive")
	}
}
