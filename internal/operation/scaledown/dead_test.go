package scaledown

import (
	"reflect"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

func TestRemoveDeadRingSorting(t *testing.T) {
	r := pubnodetool.Ring{Nodes: []pubnodetool.Node{
		{DC: "dc1", Status: "U", State: "N", HostID: "a"},
		{DC: "dc1", Status: "D", State: "N", HostID: "c"},
		{DC: "dc2", Status: "D", State: "N", HostID: "x"},
	}}
	if !onlyDown(r, "dc1") {
		t.Error("only DN besides UN: onlyDown false")
	}
	dead, others := downLeaving(r, "dc1", map[string]string{"c": "pod-2"})
	if !reflect.DeepEqual(dead, []string{"pod-2"}) || others {
		t.Errorf("dead %v others %v", dead, others)
	}
	if _, others := downLeaving(r, "dc1", map[string]string{}); !others {
		t.Error("a DN node the plan keeps: others false")
	}
	r.Nodes = append(r.Nodes, pubnodetool.Node{DC: "dc1", Status: "U", State: "L", HostID: "b"})
	if onlyDown(r, "dc1") {
		t.Error("a UL node: onlyDown true")
	}
}

func TestRemoveDeadRFOne(t *testing.T) {
	desc := nodetool.ClusterDescription{Keyspaces: []nodetool.Keyspace{
		{Name: "one", Class: "org.apache.cassandra.locator.NetworkTopologyStrategy", Options: map[string]string{"dc1": "1", "dc2": "3"}},
		{Name: "three", Class: "NetworkTopologyStrategy", Options: map[string]string{"dc1": "3"}},
		{Name: "simple", Class: "SimpleStrategy", Options: map[string]string{"replication_factor": "1"}},
		{Name: "system", Class: "LocalStrategy"},
		{Name: "elsewhere", Class: "NetworkTopologyStrategy", Options: map[string]string{"dc2": "1"}},
	}}
	if got := rfOne(desc, "dc1"); !reflect.DeepEqual(got, []string{"one", "simple"}) {
		t.Errorf("rfOne = %v", got)
	}
}

func TestRemoveDeadSteps(t *testing.T) {
	nodes := []record.Node{{Pod: "p-2"}, {Pod: "p-1"}}
	list := RemovalSteps(nodes, false, map[string]bool{"p-2": true})
	var kinds []string
	for _, s := range list {
		kinds = append(kinds, s.Kind+" "+s.Pod)
	}
	want := []string{steps.StepRemoveNode + " p-2", record.StepVerifyLeft + " p-2", record.StepShrinkSTS + " p-2", record.StepWaitPodGone + " p-2", record.StepDeletePVCs + " p-2", record.StepDecommission +
		" p-1", record.StepVerifyLeft + " p-1", record.StepShrinkSTS + " p-1", record.StepWaitPodGone + " p-1", record.StepDeletePVCs + " p-1", steps.StepUpdateCluster + " "}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("steps %v", kinds)
	}
	// The scale-down's schema lists the kind, so its checkpoints decode.
	found := false
	for _, k := range (Kind{}).Info().Checkpoint.Steps {
		found = found || k == steps.StepRemoveNode
	}
	if !found {
		t.Error("the scale-down schema lacks removenode")
	}
}

func TestRemoveDeadFirst(t *testing.T) {
	cl := topology.Cluster{Namespace: "ns", Name: "demo"}
	n := func(pod string, ord int) record.Node {
		return record.Node{Pod: pod, StatefulSet: "s", Ordinal: ord}
	}
	nodes := []record.Node{n("s-2", 2), n("s-1", 1)}
	if err := deadFirst(nodes, map[string]bool{"s-2": true}, nil, cl); err != nil {
		t.Errorf("highest dead: %v", err)
	}
	if err := deadFirst(nodes, map[string]bool{"s-1": true}, nil, cl); err == nil {
		t.Error("a live node above the dead one: no refusal")
	}
	if err := deadFirst(nodes, map[string]bool{"s-1": true}, map[string]bool{"s-2": true}, cl); err != nil {
		t.Errorf("the node above already left: %v", err)
	}
	if err := deadFirst(nodes, map[string]bool{"s-1": true, "s-2": true}, nil, cl); err == nil {
		t.Error("two dead nodes: no refusal")
	}
}
