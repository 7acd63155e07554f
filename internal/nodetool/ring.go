package nodetool

import (
	"context"
	"fmt"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
)

// StatusReader reads the ring as one pod sees it (Client has it).
type StatusReader interface {
	Status(ctx context.Context, pod string) (nodetool.Ring, error)
}

// FirstRing asks pods in turn for `nodetool status` and returns the first ring that has
// nodes, with its reader's index. A failed read or an empty ring is "unknown", never
// "no nodes" (cass-operator #973 took an empty answer for "left"): the next pod is
// asked. When none answers, errs says why each failed ("from POD: …"); reading stops
// early once ctx ends.
func FirstRing(ctx context.Context, r StatusReader, pods []string) (ring nodetool.Ring, reader int, errs []string) {
	for i, pod := range pods {
		got, err := r.Status(ctx, pod)
		if err == nil && len(got.Nodes) > 0 {
			return got, i, nil
		}
		if err == nil {
			err = ErrEmpty
		}
		errs = append(errs, fmt.Sprintf("from %s: %v", pod, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nodetool.Ring{}, -1, errs
}
