package steps

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// SeedLister is implemented by cluster specs whose operator names its seeds by pod
// (operator.Seeds; plugins/casskop/seedlist.go).
type SeedLister interface {
	// SeedEntry is the seed entry naming pod, read now ("" when pod is no seed).
	SeedEntry(ctx context.Context, pod string) (string, error)
	operator.Seeds
}

// notSeed refuses to create n's pod while the operator lists it as a seed: a seed does
// not bootstrap, so the new node would show UN with no data, and a cleanup after it
// would drop the only copies of its ranges (data loss at RF 1).
func (w *World) notSeed(ctx context.Context, n record.Node) error {
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
	return &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("%s", sl.SeedRefusal(w.CP.Namespace, w.CP.Cluster, n.Pod, e)+"; StatefulSet "+n.StatefulSet+" was not grown")}
}
