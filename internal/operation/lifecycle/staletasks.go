package lifecycle

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// reapStaleTasks is what every command that acts does first with the operator's tasks
// on the cluster (operators that run tasks: cass-operator's CassandraTask), beside the
// other marks: a task labelled with an operation that no checkpoint of the namespace
// holds any more (its record wiped, its cluster deleted) and that the operator has not
// finished is a request nobody watches. Not started, it is withdrawn: deleted with the
// UID and resourceVersion read as preconditions, so that only the task judged
// unstarted goes (a replace asked of a node that may have come back since must not
// run unwatched). Started, it is the operator's now and is left to it, said. gone: the
// cluster resource itself is gone; no operator acts on the task until a resource of
// that name is created again, and then it would, unwatched: withdrawn whatever its
// state. Failures are warnings: the next command tries again.
func (l *Lifecycle) reapStaleTasks(ctx context.Context, ns, cluster string, stands func(id string) (bool, error), gone bool) {
	ts, ok := l.Adapter.(operator.Tasks)
	if !ok {
		return
	}
	tasks, err := ts.ListTasks(ctx, ns, cluster)
	if err != nil {
		fmt.Fprintf(l.ErrOut, "warning: cannot list the tasks on %s to withdraw those of operations that are gone: %v; the next command tries again\n", cluster, err)
		return
	}
	for _, t := range tasks {
		if t.OperationID == "" || t.Finished {
			continue
		}
		if standing, err := stands(t.OperationID); err != nil || standing {
			continue
		}
		if t.Started && !gone {
			fmt.Fprintf(l.ErrOut, "warning: task %s/%s of operation %s, which is gone, is running: the operator finishes it (kubectl get %s -n %s %s)\n",
				ns, t.Name, t.OperationID, ts.TaskResource().String(), ns, t.Name)
			continue
		}
		if err := ts.DeleteTask(ctx, ns, t.Name, t.UID, t.ResourceVersion); err != nil {
			fmt.Fprintf(l.ErrOut, "warning: cannot withdraw task %s/%s of operation %s, which is gone: %v; the next command tries again\n", ns, t.Name, t.OperationID, err)
			continue
		}
		fmt.Fprintf(l.ErrOut, "Task %s/%s of operation %s, which is gone, %s: withdrew it.\n", ns, t.Name, t.OperationID, staleTaskWhy(t.Started, gone, cluster))
	}
}

// staleTaskWhy says why a task of a gone operation was withdrawn.
func staleTaskWhy(started, gone bool, cluster string) string {
	switch {
	case gone && started:
		return "was started on " + cluster + ", which is gone"
	case gone:
		return "was never started and " + cluster + " is gone"
	}
	return "was never started"
}
