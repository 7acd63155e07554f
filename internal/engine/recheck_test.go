package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// recheckStep fails its first Recheck (the world changed during the "started" write).
type recheckStep struct {
	*step
	rechecks int
	safes    int
}

func (r *recheckStep) Safe(context.Context) error { r.safes++; return nil }
func (r *recheckStep) Recheck(context.Context) error {
	r.rechecks++
	*r.log = append(*r.log, "recheck")
	if r.rechecks == 1 {
		return &NotYet{Reason: "node 0 is DN"}
	}
	return nil
}

// TestRecheckFailureBackToSafe: a Recheck that fails after the "started" write puts the
// step back to pending (written), Safe is asked again, and the action happens once,
// after a second proof and a passing Recheck.
func TestRecheckFailureBackToSafe(t *testing.T) {
	st := &fakeStore{}
	e, log := newEngine(st, "written")
	rs := &recheckStep{step: e.Steps["written0"].(*step)}
	e.Steps["written0"] = rs
	var states []string
	st.onSave = func(int) { states = append(states, string(e.CP.Steps[0].State)) }
	if err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := "save,recheck,save,save,recheck,do written0"; strings.Join(*log, ",") != want {
		t.Fatalf("history %s\nwant    %s", strings.Join(*log, ","), want)
	}
	if rs.safes != 2 || e.CP.Steps[0].Attempts != 1 {
		t.Fatalf("Safe asked %d times (want 2), attempts %d (want 1)", rs.safes, e.CP.Steps[0].Attempts)
	}
	if len(states) < 2 || states[1] != record.StatePending {
		t.Fatalf("checkpoint states written %v: want started, then pending", states)
	}
}

// TestGuardStopsBeforeAction: a Guard error stops the run before the action, and the
// step is written back to pending (nothing happened; abort may go on).
func TestGuardStopsBeforeAction(t *testing.T) {
	st := &fakeStore{}
	e, log := newEngine(st, "written", "evident")
	refuse := errors.New("operator scaled up")
	e.Guard = func(_ context.Context, id string) error {
		if id == "evident1" {
			return refuse
		}
		return nil
	}
	if err := e.Run(context.Background()); !errors.Is(err, refuse) {
		t.Fatalf("run: %v", err)
	}
	if want := "save,do written0,fence"; strings.Join(*log, ",") != want {
		t.Fatalf("history %s\nwant    %s", strings.Join(*log, ","), want)
	}
	if s := e.CP.Steps[1]; s.State != record.StatePending || s.Attempts != 0 {
		t.Fatalf("step after the guard: %s, %d attempts", s.State, s.Attempts)
	}
}
