package lifecycle

import "github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"

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
