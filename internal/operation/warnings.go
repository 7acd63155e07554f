package operation

import (
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// SeedRefusal says why pod, which the operator lists as a seed, is not created (entry:
// its entry in the list, "" when not read), in the operator's words when it has them.
func SeedRefusal(a operator.Adapter, cl topology.Cluster, pod, entry string) string {
	if s, ok := a.(operator.Seeds); ok {
		return s.SeedRefusal(cl.Namespace, cl.Name, pod, entry)
	}
	return fmt.Sprintf("pod %s is listed as a seed of %s: created now it would start as a seed and skip bootstrap, showing UN without its data; "+
		"take it off the operator's seed list, then run the command again", pod, cl.Name)
}

// PauseWarnings say what pausing the operator leaves unmanaged besides the cluster (a
// plan shows them); kind names the cluster resource ("CassandraCluster").
func PauseWarnings(pause *record.PausedOperator, kind string) []string {
	if pause == nil {
		return nil
	}
	var w []string
	for _, h := range pause.Joined {
		w = append(w, fmt.Sprintf("operator Deployment %s/%s is already paused by operation %s: this operation joins the pause, and the operator is restored (to %d replicas) only when the last of them ends", pause.Namespace, pause.Name, h, pause.Replicas))
	}
	for _, h := range pause.Adopted {
		w = append(w, fmt.Sprintf("operator Deployment %s/%s is still paused by operation %s, whose record is gone: this operation takes that pause over and restores the operator (to %d replicas) when it ends", pause.Namespace, pause.Name, h, pause.Replicas))
	}
	for _, other := range pause.Unmanaged {
		w = append(w, fmt.Sprintf("%s %s is also managed by %s/%s and stays unmanaged while it is paused", kind, other, pause.Namespace, pause.Name))
	}
	if pause.UnmanagedUnknown != "" {
		w = append(w, fmt.Sprintf("the other %ss %s/%s manages stay unmanaged while it is paused too, but cannot be named: %s", kind, pause.Namespace, pause.Name, pause.UnmanagedUnknown))
	}
	return w
}
