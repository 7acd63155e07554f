package steps

import (
	"context"
	"errors"
	"fmt"

	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// The nodetool maintenance commands a node step runs on its own node (Maintenance),
// and the check of its pod before (PodReader.PodRunning).

// Maintainer is the nodetool the steps of scale-up (cleanup) and restart (drain) need
// besides Nodetool (nodetool.Client has it).
type Maintainer interface {
	Drain(ctx context.Context, pod string) error
	Cleanup(ctx context.Context, pod string) error
}

func (w *World) maintenance() (Maintainer, error) {
	m, ok := w.Nodetool.(Maintainer)
	if !ok {
		return nil, errors.New("this nodetool client cannot drain or clean up")
	}
	return m, nil
}

// RunMaintenance implements Maintenance: the Do of the steps that run a nodetool
// command on the node (restart's drain, scale-up's cleanup): unless the cluster
// resource is being deleted, call runs it and blocks until it returns. A failed or cut
// call proves nothing, so it is retried (the step's Done decides what happened); cmd
// names the command in the error.
func (w *World) RunMaintenance(ctx context.Context, kind string, n record.Node, cmd string, call func(Maintainer) error) error {
	if err := w.refuseDeleting(record.StepID(kind, n.Pod)); err != nil {
		return err
	}
	m, err := w.maintenance()
	if err != nil {
		return err
	}
	err = call(m)
	if err == nil || ctx.Err() != nil {
		return err
	}
	var unreachable *pubnodetool.UnreachableError
	if errors.As(err, &unreachable) {
		return &operation.Retryable{Err: err}
	}
	return &operation.Retryable{Err: fmt.Errorf("nodetool %s on %s failed: %w", cmd, n.Pod, err)}
}

// PodRunning implements PodReader: the pod check of the steps that run a nodetool
// command on the node (restart's drain, scale-up's cleanup): "" when its pod is
// Running and Ready, else what to wait for. planned: only the planned pod (its UID)
// will do, and none or another incarnation is an error (drain); otherwise any
// incarnation is the same node on the same data, and none is waited for (cleanup).
func (w *World) PodRunning(ctx context.Context, n record.Node, planned bool) (string, error) {
	p, err := w.getPod(ctx, n.Pod)
	switch {
	case err != nil:
		return "cannot read pod " + n.Pod + ": " + err.Error(), nil
	case planned && (p == nil || string(p.UID) != n.PodUID):
		return "", fmt.Errorf("pod %s (UID %s) is gone", n.Pod, n.PodUID)
	case p == nil:
		return fmt.Sprintf("pod %s does not exist", n.Pod), nil
	}
	if st := PodState(p); st != "" {
		return fmt.Sprintf("pod %s is %s", n.Pod, st), nil
	}
	return "", nil
}
