package operation

import (
	"context"
	"slices"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/future"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// AheadReads are one pod's ring and keyspace reads, started before a plan asks for them
// (nodetool through exec is a plan's slowest read). Each answers as often as asked.
type AheadReads struct {
	Ring     func() (pubnodetool.Ring, error)
	Describe func() (nodetool.ClusterDescription, error)
}

// readsAhead keeps a planner's reads started ahead. The nodetool reads, by pod, are not
// started again once started, so a kind's Prefetch and its Plan share them. The racks'
// and their claims' reads are taken up once: a later read of the same objects reads
// them anew.
type readsAhead struct {
	mu     sync.Mutex
	byPod  map[string]*AheadReads
	racks  map[string]func() (RackNow, error)                                  // by namespace/StatefulSet
	claims map[string]func() (map[string]*corev1.PersistentVolumeClaim, error) // by namespace and label selector
	// readers are the pods whose ring the plan read (NoteRingReader), in that order.
	readers []string
}

// ReadAhead starts pod's ring and keyspace reads, unless this planner started them
// already, and returns them. A kind's Prefetch starts them beside the lifecycle's own
// reads (reaping, the busy checks); its Plan takes them up. They are only reads: what a
// plan judges from them is judged again by each step right before it acts.
func (p *Planner) ReadAhead(ctx context.Context, pod string) *AheadReads {
	p.ahead.mu.Lock()
	defer p.ahead.mu.Unlock()
	if a, ok := p.ahead.byPod[pod]; ok {
		return a
	}
	if p.ahead.byPod == nil {
		p.ahead.byPod = map[string]*AheadReads{}
	}
	a := &AheadReads{
		Ring:     future.Start(func() (pubnodetool.Ring, error) { return p.Nodetool.Status(ctx, pod) }),
		Describe: future.Start(func() (nodetool.ClusterDescription, error) { return p.Nodetool.DescribeCluster(ctx, pod) }),
	}
	p.ahead.byPod[pod] = a
	return a
}

// NoteRingReader records that pod answered the plan's ring read: the run's first
// recheck asks it first (RingReaders) instead of listing the pods to find one.
func (p *Planner) NoteRingReader(pod string) {
	p.ahead.mu.Lock()
	defer p.ahead.mu.Unlock()
	if !slices.Contains(p.ahead.readers, pod) {
		p.ahead.readers = append(p.ahead.readers, pod)
	}
}

// RingReaders are the pods whose ring the plan read (NoteRingReader). They only name
// whom to ask: what a run judges is the ring they answer then.
func (p *Planner) RingReaders() []string {
	p.ahead.mu.Lock()
	defer p.ahead.mu.Unlock()
	return append([]string(nil), p.ahead.readers...)
}

// ReadRacksAhead starts the reads of racks (ReadRack: the StatefulSet and its pods) and,
// as soon as a rack's StatefulSet is read, the list of its claims (ClaimsLabelled), so
// that a plan's reads of the racks run beside the lifecycle's own (reaping, the busy
// checks; each a round trip, a list waiting up to 100 ms for the API server's cache)
// instead of after them. The plan takes each up once. They only read: what a plan
// judges from them is judged again by each step right before it acts.
func (p *Planner) ReadRacksAhead(ctx context.Context, ns string, racks []topology.Rack) {
	p.ahead.mu.Lock()
	defer p.ahead.mu.Unlock()
	if p.ahead.racks == nil {
		p.ahead.racks = map[string]func() (RackNow, error){}
	}
	for _, r := range racks {
		key := aheadKey(ns, r.StatefulSet)
		if _, ok := p.ahead.racks[key]; ok {
			continue
		}
		p.ahead.racks[key] = future.Start(func() (RackNow, error) {
			return p.readRack(ctx, ns, r, func(sts *appsv1.StatefulSet) { p.claimsAhead(ctx, ns, sts) })
		})
	}
}

// claimsAhead starts the list of sts's claims, as preflights list them (ClaimLabels),
// when they can be listed so.
func (p *Planner) claimsAhead(ctx context.Context, ns string, sts *appsv1.StatefulSet) {
	match := ClaimLabels(sts)
	if match == nil {
		return
	}
	selector := labels.SelectorFromSet(match).String()
	p.ahead.mu.Lock()
	defer p.ahead.mu.Unlock()
	if p.ahead.claims == nil {
		p.ahead.claims = map[string]func() (map[string]*corev1.PersistentVolumeClaim, error){}
	}
	key := aheadKey(ns, selector)
	if _, ok := p.ahead.claims[key]; !ok {
		p.ahead.claims[key] = future.Start(func() (map[string]*corev1.PersistentVolumeClaim, error) { return p.claimsSelected(ctx, ns, selector) })
	}
}

// aheadKey names a read ahead of the rack or the claims what names in namespace ns (a
// StatefulSet, a label selector).
func aheadKey(ns, what string) string { return ns + "/" + what }

// takeAhead hands over the read under key in *reads, once (the zero value: none).
func takeAhead[T any](mu *sync.Mutex, reads *map[string]T, key string) T {
	mu.Lock()
	defer mu.Unlock()
	read := (*reads)[key]
	delete(*reads, key)
	return read
}
