package steps

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
)

// SeedLister is implemented by cluster specs whose operator names its seeds by pod
// (CassKop's status.seedlist, plugins/casskop/seedlist.go).
type SeedLister interface {
	// SeedEntry is the seed entry naming pod, read now ("" when pod is no seed).
	SeedEntry(ctx context.Context, pod string) (string, error)
}

// notSeed refuses to create n's pod while the operator lists it as a seed: a seed does
// not bootstrap, so the new node would show UN with no data, and a cleanup after it
// would drop the only copies of its ranges (data loss at RF 1).
func (w *World) notSeed(ctx context.Context, n checkpoint.Node) error {
	sl, ok := w.Spec.(SeedLister)
	if !ok {
		return nil
	}
	e, err := sl.SeedEntry(ctx, n.Pod)
	if err != nil {
		return fmt.Errorf("cannot read the seed list of %s: %w", w.CP.Cluster, err)
	}
	if e == "" {
		return nil
	}
	return &engine.Fatal{Code: exit.Refused, Err: fmt.Errorf("%s", SeedRefusal(w.CP.Namespace, w.CP.Cluster, n.Pod, e)+"; StatefulSet "+n.StatefulSet+" was not grown")}
}

// SeedRefusal says why a pod listed as a seed is not created, and what to do.
func SeedRefusal(ns, cluster, pod, entry string) string {
	where := "status.seedlist"
	if entry != "" {
		where = fmt.Sprintf("%q in status.seedlist", entry)
	}
	return fmt.Sprintf("pod %s is listed as a seed (%s of %s, left by an earlier scale-down): created now it would start as a seed and skip bootstrap, "+
		"showing UN without its data (a cleanup would then drop the only copies of its ranges). Remove that entry from status.seedlist "+
		"(kubectl edit cassandracluster -n %s %s, with --subresource=status where the CRD has one), then run the command again "+
		"(or kubectl cassandra resume -n %s %s when an operation is in flight)", pod, where, cluster, ns, cluster, ns, cluster)
}
