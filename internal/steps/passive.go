package steps

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
)

// Steps whose Do does nothing: they wait for what the step before set off, so the engine
// has no action to fence for them (internal/engine: Passive).

// Passive marks waitPodGone as acting on nothing.
func (s *waitPodGone) Passive() {}

// Passive marks verifyLeft as acting on nothing.
func (s *verifyLeft) Passive() {}

// waiting is the base of the steps that only wait for their pod to come back with its
// node UN (waitJoined; restart's wait-restarted asks it as PodBack): nothing to make
// safe, nothing to do, nothing acted on. Each such step has its own test of the pod
// (BackTest); waiting reads the pod for it.
type waiting struct{ node }

// Safe: nothing is changed by a waiting step.
func (waiting) Safe(context.Context) error { return nil }

// Do: nothing; the StatefulSet controller creates the pod.
func (waiting) Do(context.Context) error { return nil }

// Passive marks a waiting step as acting on nothing.
func (waiting) Passive() {}

// BackTest is a waiting step's test of its pod as just read (nil: there is none):
// whether the pod is back with its node UN, else what is missing.
type BackTest func(ctx context.Context, p *corev1.Pod) (bool, string, error)

// readBack reads the pod and asks test about it: every check of a waiting step starts
// with that read.
func (s waiting) readBack(ctx context.Context, test BackTest) (bool, string, error) {
	p, err := s.w.getPod(ctx, s.n.Pod)
	if err != nil {
		return false, "", err
	}
	return test(ctx, p)
}

// doneBack is the Done of a waiting step: readBack, without what is missing.
func (s waiting) doneBack(ctx context.Context, test BackTest) (bool, error) {
	ok, _, err := s.readBack(ctx, test)
	return ok, err
}

// nodeUN reads the ring from a pod other than the step's and tells whether its node
// (found by find) is UN, else why not; absent says it is missing, with %s for the reader.
func (s waiting) nodeUN(ctx context.Context, find func(pubnodetool.Ring) (pubnodetool.Node, bool), absent string) (bool, string, error) {
	pod := s.n.Pod
	r, reader, err := s.w.ringExcept(ctx, pod)
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

// checkHint says what to check when the pod does not come back, then to resume: its
// description and its logs (each with what to look for in it), and more.
func (s waiting) checkHint(describe, logs, more string) string {
	ns, p := s.w.Namespace, s.n.Pod
	return fmt.Sprintf("check: kubectl describe pod -n %s %s%s; kubectl logs -n %s %s%s%s; %s; then run: kubectl cassandra resume -n %s %s",
		ns, p, describe, ns, p, s.w.container(), logs, more, s.w.CP.Namespace, s.w.CP.Cluster)
}

// waitBack is the Wait of a waiting step (id): it polls test until the pod is back with
// its node UN, reporting what is missing, and warns once, with hint, after StallAfter.
// When ctx ends it fails with the last thing missing (notBack: "pod … did not join").
// notUN, when set, looks further while the pod runs but its node is not UN yet, and may
// end the wait. guard (nil: none) watches an operator that acts for what keeps it from
// going on: a cause that lasts StallAfter stops the wait, and a timeout names what
// explains it (drivenstall.go).
func (s waiting) waitBack(ctx context.Context, id, notBack, hint string, test BackTest, notUN func() error, guard *stallGuard) error {
	w := s.w
	start := w.Clock()
	stall := &stallWatch{w: w, id: id, start: start}
	last := "state unknown"
	gaveUp := func() error {
		if guard != nil && timedOut(ctx) {
			return fmt.Errorf("%s: %s; read now: %s; %s", notBack, last, w.explainStall(ctx, s.n), hint)
		}
		return fmt.Errorf("%s: %s; %s", notBack, last, hint)
	}
	for {
		since := w.markEvidence()
		ok, what, err := s.readBack(ctx, test)
		if ok {
			return nil
		}
		if ctx.Err() != nil {
			return gaveUp()
		}
		if err != nil {
			what = "state unknown: " + err.Error()
		} else if notUN != nil && strings.HasPrefix(what, "node ") {
			if err := notUN(); err != nil {
				return err
			}
		}
		last = what
		if err := w.waiting(ctx, guard, id, what, start, since, keyResource, keyPod(s.n.Pod)); err != nil {
			return err
		}
		stall.check(what, hint)
		upTo := w.backDue(what)
		if d := guard.due(); d > 0 && (upTo == 0 || d < upTo) {
			upTo = d
		}
		if err := w.awaitEvidence(ctx, since, w.poll(), upTo, keyResource, keyPod(s.n.Pod)); err != nil {
			return gaveUp()
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
	if s.warned || s.w.StallAfter <= 0 || s.w.Clock().Sub(s.start) < s.w.StallAfter {
		return
	}
	s.warned = true
	s.w.Reporter.Warn(s.id, fmt.Sprintf("still waiting after %s: %s; %s", s.w.Clock().Sub(s.start).Round(time.Second), what, hint))
}

// backDue is how long a wait for a pod to come back goes at most without reading, on
// the evidence feed, after it found what (a BackTest's words): a pod that runs but whose
// node is not UN yet is seen UN only in a ring read (no object changes then), so it is
// read again every poll interval; anything else is read again when the pod (or the
// operator's resource) changes (0: the safety net).
func (w *World) backDue(what string) time.Duration {
	if strings.HasPrefix(what, "node ") {
		return w.poll()
	}
	return w.unknownDue(what, 0)
}
