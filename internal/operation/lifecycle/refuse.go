package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
)

// RefuseBusy refuses while the operator is busy with the cluster or it is being deleted.
func (l *Lifecycle) RefuseBusy(ctx context.Context) error {
	if err := l.refuseDeleting("start an operation"); err != nil {
		return err
	}
	busy := append([]string{}, l.Cluster.Busy...)
	if pods, err := l.Adapter.BusyPods(ctx, l.Cluster.Namespace, l.Cluster.Name); err != nil {
		return fmt.Errorf("cannot check %s's pod operations: %w", l.Adapter.Title(), err)
	} else {
		busy = append(busy, pods...)
	}
	if len(busy) > 0 {
		return exit.Refusedf("%s is busy with cluster %s: %s; wait until it is idle (kubectl cassandra status %s), nothing changed", l.Adapter.Title(), l.Cluster.Name, strings.Join(busy, "; "), l.Cluster.Name)
	}
	return nil
}

// refuseDeleting refuses to plan or resume an operation on a cluster resource that is
// being deleted (metadata.deletionTimestamp set): its operator and finalizers are
// tearing it down, and nothing the plugin does would survive.
func (l *Lifecycle) refuseDeleting(what string) error {
	if !l.Cluster.Deleting {
		return nil
	}
	gr := l.Adapter.GroupResource()
	return exit.Refusedf("%s %s/%s is being deleted (metadata.deletionTimestamp is set): refusing to %s; nothing changed. "+
		"Check it with: kubectl get %s -n %s %s -o jsonpath='{.metadata.deletionTimestamp} {.metadata.finalizers}'",
		l.Adapter.Kind(), l.Cluster.Namespace, l.Cluster.Name, what, gr.String(), l.Cluster.Namespace, l.Cluster.Name)
}

// CheckpointError explains an unusable checkpoint.
func (l *Lifecycle) CheckpointError(err error) error {
	switch {
	case errors.Is(err, checkpoint.ErrNewerSchema):
		return exit.Refusedf("%v; nothing changed", err)
	case errors.Is(err, checkpoint.ErrUnknownKind), errors.Is(err, checkpoint.ErrOtherOperator):
		// Not corrupt: another build may hold it. Removing it would lose its progress.
		return exit.Refusedf("%v; nothing changed. Finish it with the kubectl-cassandra that started it (see who: kubectl get %s -n %s %s -o jsonpath='{.metadata.annotations.%s}')",
			err, l.Adapter.GroupResource(), l.Cluster.Namespace, l.Cluster.Name, strings.ReplaceAll(checkpoint.Annotation, ".", `\.`))
	case errors.Is(err, checkpoint.ErrCorrupt), errors.Is(err, checkpoint.ErrOtherCluster):
		return fmt.Errorf("%v. Nothing changed. Inspect it with: kubectl get %s -n %s %s -o jsonpath='{.metadata.annotations.%s}'; "+
			"if no operation is really in flight, remove it with: kubectl annotate %s -n %s %s %s-",
			err, l.Adapter.GroupResource(), l.Cluster.Namespace, l.Cluster.Name, strings.ReplaceAll(checkpoint.Annotation, ".", `\.`),
			l.Adapter.GroupResource(), l.Cluster.Namespace, l.Cluster.Name, checkpoint.Annotation)
	}
	return fmt.Errorf("cannot read the checkpoint of %s: %w", l.Cluster.Name, err)
}
