package world

import (
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	cassop "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
)

// The changing-world checks of a cass-operator world (Opts.CassOperator): the plugin's
// size requests judged as they take effect, and what "consistent" means there. The
// operator is never paused (a plugin write to its Deployment is a violation,
// afterAction), so "restored" is: its Deployment at its replicas and the datacenter's
// spec.size equal to its racks and to the pods that exist.

// checkDrivenSizeWrite judges each of the plugin's spec.size changes as it takes effect
// (an OnSideEffect hook, ChainSideEffect): every node of dc1 UN (or gone), the
// cass-operator Deployment running with a ready replica, one node at a time. Whether
// the write was a planned step, from the value the plan computed, is the test's to
// judge (it knows the plan; DCSizeEdits says which steps someone else made). Called
// with w.mu held.
func (w *World) checkDrivenSizeWrite() {
	if len(w.hist.events) == 0 {
		return
	}
	e := w.hist.events[len(w.hist.events)-1]
	if e.Kind != "write" || e.Resource != DCGVR.Resource || !e.SpecChanged || e.Before == e.After {
		return
	}
	what := fmt.Sprintf("spec.size %d -> %d", e.Before, e.After)
	w.checkRing(what, "", "dc1")
	if r := w.replicasOf(deployGVR, CassOperatorDeployment); r < 1 {
		w.violations = append(w.violations, fmt.Sprintf("%s while cass-operator has %d replicas", what, r))
	}
	if w.co.crashLooping {
		w.violations = append(w.violations, what+" while cass-operator has no ready replica")
	}
	if d := e.After - e.Before; d != 1 && d != -1 {
		w.violations = append(w.violations, what+": not one node at a time")
	}
}

// ChainSideEffect makes every later side effect run checkDrivenSizeWrite first, then
// whatever OnSideEffect holds (an armed change). Call after ChangeAfter and again after
// PutBack.
func (w *World) ChainSideEffect() {
	w.mu.Lock()
	defer w.mu.Unlock()
	next := w.OnSideEffect
	w.OnSideEffect = func(n int) {
		w.checkDrivenSizeWrite()
		if next != nil {
			next(n)
		}
	}
}

// DCSizeEdits lists the spec.size changes someone else made ("1->2"), in order.
func (w *World) DCSizeEdits() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.co.sizeEdits...)
}

// dcDisagrees says how the datacenter's spec.size differs from its racks: the sum of
// the StatefulSets' replicas and of the Cassandra pods that exist ("" when they
// agree). Called with w.mu held.
func (w *World) dcDisagrees() string {
	size := w.dcSize()
	if size < 0 {
		return "the CassandraDatacenter is unreadable"
	}
	var replicas, pods int64
	names := " " + strings.Join(w.PodNames(), " ") + " "
	for _, r := range w.Racks {
		n := w.replicasOf(stsGVR, w.stsName(r))
		if n < 0 {
			return "StatefulSet " + w.stsName(r) + " is missing"
		}
		replicas += int64(n)
		for i := 0; i < w.Nodes+int(size)+4; i++ {
			if strings.Contains(names, fmt.Sprintf(" %s-%d ", w.stsName(r), i)) {
				pods++
			}
		}
	}
	switch {
	case replicas != size:
		return fmt.Sprintf("spec.size of dc1 is %d and its StatefulSets have %d replicas", size, replicas)
	case pods != size:
		return fmt.Sprintf("spec.size of dc1 is %d and %d Cassandra pods exist", size, pods)
	}
	return ""
}

// NotUN lists the nodes of the ring that are not UN ("pod CODE").
func (w *World) NotUN() []string {
	var out []string
	nodes, _ := w.Cass.Nodes()
	for _, n := range nodes {
		if n.PeerCode != "" && n.PeerCode != "UN" {
			out = append(out, n.Pod+" "+n.PeerCode)
		}
	}
	return out
}

// DCSize is the CassandraDatacenter's spec.size.
func (w *World) DCSize() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return int(w.dcSize())
}

// HasDCCheckpoint reports whether the CassandraDatacenter carries a checkpoint.
func (w *World) HasDCCheckpoint() bool {
	_, ok := w.DC().GetAnnotations()[checkpoint.Annotation]
	return ok
}

// rackCount is the count the cluster resource gives a rack: CassKop's nodesPerRacks,
// cass-operator's share of spec.size (SplitRacks). Called with w.mu held.
func (w *World) rackCount(rack string) int {
	if w.co == nil {
		return w.nodesPerRack()
	}
	size := w.dcSize()
	if size < 0 {
		return -1
	}
	for i, r := range w.Racks {
		if r == rack {
			return cassop.SplitRacks(int(size), len(w.Racks))[i]
		}
	}
	return -1
}
