package steps

import (
	"context"
	"fmt"

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
