package world

import (
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestLockCheckInFlight: after a takeover, a run's one action whose proof (its
// checkpoint write) came right before the takeover is the unclosable gap and passes; a
// second action, or an action after an action with no proof between, is a violation.
func TestLockCheckInFlight(t *testing.T) {
	me, other := &record.Holder{Session: "a"}, &record.Holder{Session: "b", Host: "laptop-b"}
	run := func(events ...string) []string {
		w := &World{}
		w.chg.actor, w.chg.held = "a", map[string]bool{"a": true}
		holder := me
		for _, e := range events {
			switch e {
			case "proof":
				w.proved("a")
			case "act":
				w.checkLock("act", holder)
			case "takeover":
				w.chg.ev++
				w.chg.takeoverAt, holder = w.chg.ev, other
			}
		}
		return w.violations
	}
	if v := run("proof", "act", "proof", "takeover", "act"); len(v) != 0 {
		t.Fatalf("in-flight action after its proof: %v", v)
	}
	if v := run("proof", "act", "proof", "takeover", "act", "act"); len(v) != 1 || !strings.Contains(v[0], "lost the lock") {
		t.Fatalf("a second action: %v, want one violation", v)
	}
	if v := run("proof", "act", "takeover", "act"); len(v) != 1 {
		t.Fatalf("an action with no proof since the last action: %v, want one violation", v)
	}
	if v := run("proof", "takeover", "proof", "act"); len(v) != 1 {
		t.Fatalf("a proof after the takeover excuses nothing: %v, want one violation", v)
	}
}
