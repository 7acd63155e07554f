package scaledown

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Prefetch starts the plan's ring and keyspace reads from the pod the plan will most
// likely read them from, and its reads of the racks and their claims, as soon as no
// operation is in flight: they run beside the lifecycle's own reads (reaping, the busy
// checks) and Plan takes them up (newEarly, ReadRack, ClaimsLabelled). Only a request
// that lowers a count the resource asks for now starts them: the plan of any other (a
// scale-up, a count reached, bad input) needs no ring.
func (k Kind) Prefetch(ctx context.Context, env *pub.Env) {
	if pub.KindRequestOf[Options](env.Request).Options.RemoveDead {
		return
	}
	pod, racks := prefetchReads(env)
	if pod == "" {
		return
	}
	p := operation.PlannerOf(env)
	p.ReadAhead(ctx, pod)
	p.ReadRacksAhead(ctx, env.Cluster.Namespace, racks)
}

// prefetchReads is the pod Plan reads the ring from when the request lowers a count, as
// far as the resource tells before anything is read ("" when it does not lower one),
// and the racks Plan reads.
func prefetchReads(env *pub.Env) (string, []topology.Rack) {
	if sc, ok := env.Adapter.(operator.Scaler); ok {
		d, err := operation.NewDrivenScale(env.Cluster, env.Request, sc)
		if err != nil || d.Size >= sum(d.DC.RackNodes()) {
			return "", nil
		}
		return likelyReader(d.DC, d.Wanted), d.DC.Racks
	}
	_, racks, err := operation.SelectRacks(env.Cluster, env.Request, env.Adapter)
	if err != nil || len(racks) == 0 || env.Request.Nodes >= racks[0].Nodes {
		return "", nil
	}
	return racks[0].StatefulSet + "-0", racks
}

func sum(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
