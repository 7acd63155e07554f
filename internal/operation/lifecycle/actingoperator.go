package lifecycle

import (
	"context"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
)

// requireActingOperator is the operator check for an operator that scales its
// datacenters itself (operator.Scaler): it is the one that acts, so it must run, and
// it is never paused (cass-operator: a pod restarted while it is down stays down).
// --operator and --pause-operator=false ask for a pause that does not exist here.
func (l *Lifecycle) requireActingOperator(ctx context.Context, named string) error {
	if named != "" {
		return exit.Usagef("--operator names the operator Deployment to pause; %s is never paused (it is the one that acts, asked one node at a time); nothing changed", l.Adapter.Title())
	}
	ops, err := l.Adapter.RunningOperators(ctx, l.Cluster.Namespace)
	if err != nil {
		return err
	}
	if len(ops) == 0 {
		return exit.Refusedf("no running %s manages namespace %s: it is the one that removes and adds the nodes (the plugin asks it and verifies each step), so nothing can be done while it is down. "+
			"Start it again (kubectl get deployments -A | grep %s), then run this again; nothing changed", l.Adapter.Title(), l.Cluster.Namespace, l.Adapter.Name())
	}
	if len(ops) > 1 {
		var names []string
		for _, op := range ops {
			names = append(names, op.String())
		}
		return exit.Refusedf("several %s operators manage namespace %s (%s): they would act on the datacenter twice; leave one running, then run this again; nothing changed",
			l.Adapter.Title(), l.Cluster.Namespace, strings.Join(names, ", "))
	}
	return nil
}
