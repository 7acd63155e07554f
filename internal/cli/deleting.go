package cli

import "github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"

// refuseDeleting refuses to plan or resume an operation on a cluster resource that is
// being deleted (metadata.deletionTimestamp set): its operator and finalizers are
// tearing it down, and nothing the plugin does would survive.
func refuseDeleting(s *session, what string) error {
	if !s.cluster.Deleting {
		return nil
	}
	gr := s.adapter.GroupResource()
	return exit.Refusedf("%s %s/%s is being deleted (metadata.deletionTimestamp is set): refusing to %s; nothing changed. "+
		"Check it with: kubectl get %s -n %s %s -o jsonpath='{.metadata.deletionTimestamp} {.metadata.finalizers}'",
		s.adapter.Kind(), s.cluster.Namespace, s.cluster.Name, what, gr.String(), s.cluster.Namespace, s.cluster.Name)
}
