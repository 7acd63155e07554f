package world

import (
	"sort"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// The changing world of the datacenter kinds (add-dc, remove-dc): a node of the other
// datacenter down, a rebuild's stream failing part-way. Each is made only while a
// datacenter kind runs, so that the other kinds' searches do not grow by states they
// cannot tell apart.

// runsKind reports whether the checkpoint on the cluster resource is of one of kinds.
func (w *World) runsKind(kinds ...string) bool {
	cp := w.CR().GetAnnotations()[checkpoint.Annotation]
	for _, k := range kinds {
		if strings.Contains(cp, `"kind":"`+k+`"`) {
			return true
		}
	}
	return false
}

// PickDC picks the i-th existing pod (by name) of datacenter dc (its name holds
// "-dc-", as both operators name their StatefulSets).
func PickDC(dc string, i int) Picker {
	return func(w *World) string {
		var in []string
		for _, p := range w.PodNames() {
			if strings.Contains(p, "-"+dc+"-") {
				in = append(in, p)
			}
		}
		sort.Strings(in)
		if i < len(in) {
			return in[i]
		}
		return ""
	}
}

// DatacenterNodeDown is NodeDown of the picked node, made only while a datacenter kind
// runs (the new datacenter's node during an add-dc, the other datacenter's during a
// remove-dc).
func DatacenterNodeDown(pick Picker) Change {
	c := NodeDown(pick)
	apply := c.apply
	c.Name = "datacenter-node-DN"
	c.apply = func(w *World) ([]string, func(), bool) {
		if !w.runsKind("add-dc", "remove-dc") {
			return nil, nil, false
		}
		return apply(w)
	}
	return c
}

// RebuildStreamFails: the next rebuild of every node fails part-way, once (a session's
// source dies: the plan fails with "Stream failed" once the other sessions finished,
// what they brought is kept; test/sim/rebuild.go, Fault.RebuildFailures). Made only
// while an add-dc runs; put back, the fault is cleared where it did not fire.
func RebuildStreamFails() Change {
	return Change{Name: "rebuild-stream-failed", apply: func(w *World) ([]string, func(), bool) {
		if !w.runsKind("add-dc") {
			return nil, nil, false
		}
		var hit []string
		for _, p := range w.PodNames() {
			if err := w.Cass.UpdateFault(p, func(f *sim.Fault) { f.RebuildFailures = 1 }); err == nil {
				hit = append(hit, p)
			}
		}
		if len(hit) == 0 {
			return nil, nil, false
		}
		return []string{"stream failed"}, func() {
			for _, p := range hit {
				_ = w.Cass.UpdateFault(p, func(f *sim.Fault) { f.RebuildFailures = 0 })
			}
		}, true
	}}
}
