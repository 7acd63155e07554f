package steps

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
)

// Steps whose Do does nothing: they wait for what the step before set off, so the engine
// has no action to fence for them (internal/engine: Passive).

// Passive marks WaitPodGone as acting on nothing.
func (s *WaitPodGone) Passive() {}

// Passive marks VerifyLeft as acting on nothing.
func (s *VerifyLeft) Passive() {}

// waiting is embedded by the steps that only wait for a pod to come back with its node
// UN (WaitRestarted, WaitJoined): nothing to make safe, nothing to do, nothing acted on.
type waiting struct{}

// Safe: nothing is changed by a waiting step.
func (waiting) Safe(context.Context) error { return nil }

// Do: nothing; the StatefulSet controller creates the pod.
func (waiting) Do(context.Context) error { return nil }

// Passive marks a waiting step as acting on nothing.
func (waiting) Passive() {}

// nodeUN reads the ring from a pod other than pod and tells whether pod's node (found
// by find) is UN, else why not; absent says it is missing, with %s for the reader.
func (w *World) nodeUN(ctx context.Context, pod string, find func(nodetool.Ring) (nodetool.Node, bool), absent string) (bool, string, error) {
	r, reader, err := w.ringExcept(ctx, pod)
	if err != nil {
		return false, "", err
	}
	node, ok := find(r)
	switch {
	case !ok:
		return false, "node " + pod + " " + fmt.Sprintf(absent, reader), nil
	case node.Code() == "UJ":
		return false, fmt.Sprintf("node %s is UJ: joining (bootstrap streaming)", pod), nil
	case node.Code() != "UN":
		return false, fmt.Sprintf("node %s is %s in the ring read from %s", pod, node.Code(), reader), nil
	}
	return true, "", nil
}

// waitBack is the Wait of the waiting steps: it polls check until the pod is back with
// its node UN, reporting what is missing, and warns once, with hint, after StallAfter.
// When ctx ends it fails with the last thing missing (notBack: "pod … did not join").
// notUN, when set, looks further while the pod runs but its node is not UN yet, and may
// end the wait.
func (w *World) waitBack(ctx context.Context, id, notBack, hint string, check func(context.Context) (bool, string, error), notUN func() error) error {
	start := w.now()
	stall := &stallWatch{w: w, id: id, start: start}
	last := "state unknown"
	for {
		ok, what, err := check(ctx)
		if ok {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %s; %s", notBack, last, hint)
		}
		if err != nil {
			what = "state unknown: " + err.Error()
		} else if notUN != nil && strings.HasPrefix(what, "node ") {
			if err := notUN(); err != nil {
				return err
			}
		}
		last = what
		w.Reporter.Waiting(id, what, w.now().Sub(start))
		stall.check(what, hint)
		if err := w.sleep(ctx, w.poll()); err != nil {
			return fmt.Errorf("%s: %s; %s", notBack, last, hint)
		}
	}
}

// stallWatch emits one warning, with what to check, once a wait has lasted StallAfter.
type stallWatch struct {
	w      *World
	id     string
	start  time.Time
	warned bool
}

func (s *stallWatch) check(what, hint string) {
	if s.warned || s.w.StallAfter <= 0 || s.w.now().Sub(s.start) < s.w.StallAfter {
		return
	}
	s.warned = true
	s.w.Reporter.Warn(s.id, fmt.Sprintf("still waiting after %s: %s; %s", s.w.now().Sub(s.start).Round(time.Second), what, hint))
}
