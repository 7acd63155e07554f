package checkpoint

import (
	"encoding/json"
	"errors"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"os"
	"strings"
	"testing"
)

// The kinds these tests decode, as their packages name them (internal/operation/...).
const (
	kindScaleUp = "scale-up"
	kindRestart = "restart"
)

// TestDecodeSchema1 reads a checkpoint written by the schema 1 plugin (a 3 -> 1
// scale-down with the operator paused, killed while decommissioning its first node;
// produced by the code before schema 2, committed unchanged).
func TestDecodeSchema1(t *testing.T) {
	b, err := os.ReadFile("testdata/v1-scale-down.json")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := Decode(string(b), "cc-uid-1", testKinds)
	if err != nil {
		t.Fatalf("schema 1 checkpoint refused: %v", err)
	}
	if cp.SchemaVersion != 1 || cp.Kind != KindScaleDown || len(cp.Nodes) != 2 || cp.PausedOperator == nil {
		t.Fatalf("decoded %+v", cp)
	}
	if s, _ := cp.Step("decommission/demo-dc1-rack1-2"); s.State != record.StateStarted {
		t.Fatalf("decommission step: %+v", s)
	}
	// Re-encoding keeps schema 1: an older plugin can still resume it.
	out, err := Encode(cp, testKinds)
	if err != nil || !strings.Contains(out, `"schemaVersion":1,`) {
		t.Fatalf("re-encode: %v\n%s", err, out)
	}
	// A schema 1 checkpoint without a kind is a scale-down (the only kind schema 1 had).
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	delete(m, "kind")
	nokind, _ := json.Marshal(m)
	if cp, err := Decode(string(nokind), "", testKinds); err != nil || cp.Kind != KindScaleDown {
		t.Fatalf("schema 1 without kind: %v %+v", err, cp)
	}
	// Schema 1 cannot hold the new kinds.
	m["kind"] = kindRestart
	restart1, _ := json.Marshal(m)
	if _, err := Decode(string(restart1), "", testKinds); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "needs schema 2") {
		t.Fatalf("restart in schema 1: %v", err)
	}
}

// testKinds are the kinds as their packages declare them (internal/operation/*; the
// registry's test, internal/operation/kinds/kinds_test.go, holds them equal).
var testKinds = Schemas{
	KindScaleDown: {Version: 1, Steps: []string{record.StepDecommission, record.StepVerifyLeft, record.StepShrinkSTS, record.StepWaitPodGone, record.StepDeletePVCs, StepUpdateCluster, record.StepPauseOperator, record.StepResumeOperator, record.StepDeleteLeftoverPVCs}},
	kindScaleUp:   {Version: 2, NewNodes: true, Steps: []string{StepGrowSTS, record.StepWaitJoined, StepUpdateCluster, StepCleanup, record.StepPauseOperator, record.StepResumeOperator}},
	kindRestart:   {Version: 2, Steps: []string{StepDrain, StepDeletePod, StepWaitRestarted, record.StepPauseOperator, record.StepResumeOperator}},
	kindRepair:    {Version: 2, Unowned: true, Steps: []string{record.StepDecommission, record.StepVerifyLeft, record.StepShrinkSTS, record.StepWaitPodGone, record.StepDeletePVCs, StepOperatorStatus, record.StepPauseOperator, record.StepResumeOperator}},
}

func base(kind string) *record.Checkpoint {
	return &record.Checkpoint{SchemaVersion: testKinds[kind].Version, OperationID: "op", Kind: kind, Namespace: "ns", Cluster: "c", ClusterUID: "uid",
		Target: record.Target{DC: "dc1", Racks: []string{"r1"}, Nodes: 3, From: map[string]int{"r1": 1}}}
}

func TestScaleUpCheckpoint(t *testing.T) {
	cp := base(kindScaleUp)
	newNodes := []record.Node{{Pod: "c-dc1-r1-1", Ordinal: 1, DC: "dc1", Rack: "r1", StatefulSet: "c-dc1-r1", New: true},
		{Pod: "c-dc1-r1-2", Ordinal: 2, DC: "dc1", Rack: "r1", StatefulSet: "c-dc1-r1", New: true}}
	old := []record.Node{{Pod: "c-dc1-r1-0", PodUID: "u0", Ordinal: 0, DC: "dc1", Rack: "r1", StatefulSet: "c-dc1-r1", HostID: "h0"}}
	cp.Nodes = append(append(cp.Nodes, old...), newNodes...)
	cp.Steps = scaleUpSteps(newNodes, old, true)
	want := []string{"pause-operator", "grow-statefulset/c-dc1-r1-1", "wait-joined/c-dc1-r1-1", "grow-statefulset/c-dc1-r1-2", "wait-joined/c-dc1-r1-2",
		"update-cluster", "resume-operator", "cleanup/c-dc1-r1-0"}
	var got []string
	for _, s := range cp.Steps {
		got = append(got, s.ID)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("steps %v", got)
	}
	cp.PausedOperator = &record.PausedOperator{Namespace: "ns", Name: "fake-operator", UID: "d", Replicas: 1}
	s, err := Encode(cp, testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, `"schemaVersion":2,`) {
		t.Fatalf("scale-up written with %s", s[:40])
	}
	if _, err := Decode(s, "uid", testKinds); err != nil {
		t.Fatal(err)
	}
	// A scale-down step in a scale-up is corrupt; so is a new node in a restart.
	cp.Steps = append(cp.Steps, PendingStep(record.StepDecommission, "c-dc1-r1-0"))
	if _, err := Encode(cp, testKinds); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("decommission in a scale-up: %v", err)
	}
	r := base(kindRestart)
	r.Nodes = newNodes[:1]
	r.Steps = restartSteps(r.Nodes, false)
	if _, err := Encode(r, testKinds); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "only a scale-up") {
		t.Fatalf("new node in a restart: %v", err)
	}
}

func TestRestartAndRepairCheckpoints(t *testing.T) {
	r := base(kindRestart)
	r.Nodes = []record.Node{{Pod: "c-dc1-r1-1", PodUID: "u1", Ordinal: 1, DC: "dc1", Rack: "r1", StatefulSet: "c-dc1-r1"},
		{Pod: "c-dc1-r1-0", PodUID: "u0", Ordinal: 0, DC: "dc1", Rack: "r1", StatefulSet: "c-dc1-r1"}}
	r.Steps = restartSteps(r.Nodes, false)
	if len(r.Steps) != 6 || r.Steps[0].ID != "drain/c-dc1-r1-1" || r.Steps[5].ID != "wait-restarted/c-dc1-r1-0" {
		t.Fatalf("restart steps %+v", r.Steps)
	}
	if _, err := Encode(r, testKinds); err != nil {
		t.Fatal(err)
	}
	r.Nodes[0].PodUID = ""
	if _, err := Encode(r, testKinds); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("restart node without UID: %v", err)
	}
	// A repair may name a pod that is already gone (no UID), and needs no target count.
	p := base(kindRepair)
	p.Target.Nodes = 0
	p.Nodes = []record.Node{{Pod: "c-dc1-r1-1", Ordinal: 1, DC: "dc1", Rack: "r1", StatefulSet: "c-dc1-r1", HostID: "h1"}}
	p.Steps = []record.Step{PendingStep(record.StepDeletePVCs, "c-dc1-r1-1"), PendingStep(StepOperatorStatus, "c-dc1-r1-1")}
	if _, err := Encode(p, testKinds); err != nil {
		t.Fatal(err)
	}
	if !p.SameRacks("dc1", []string{"r1"}) || p.SameRacks("dc1", []string{"r2"}) {
		t.Fatal("SameRacks")
	}
}

// kindRepair is a kind an operator offers that may name a pod already gone (Unowned),
// as CassKop's repair-operator-state does (plugins/casskop/repair).
const kindRepair = "repair-fake-status"

// TestSettleCheckpoint: a scale-down that removes no node deletes the left-over claims
// it names; a step about claims the plan does not name, or a pod planned twice, is
// refused.
func TestSettleCheckpoint(t *testing.T) {
	kinds := testKinds
	cp := base(KindScaleDown)
	cp.Target.Nodes = 1
	cp.PausedOperator = &record.PausedOperator{Name: "op"}
	cp.Leftovers = []record.Leftover{{Pod: "c-dc1-r1-2", StatefulSet: "c-dc1-r1", Rack: "r1", Ordinal: 2, PVCs: []record.PVC{{Name: "data-c-dc1-r1-2", UID: "u2"}}},
		{Pod: "c-dc1-r1-1", StatefulSet: "c-dc1-r1", Rack: "r1", Ordinal: 1, PVCs: []record.PVC{{Name: "data-c-dc1-r1-1", UID: "u1"}}}}
	cp.Steps = settleSteps(cp.Leftovers, true)
	var ids []string
	for _, s := range cp.Steps {
		ids = append(ids, s.ID)
	}
	if got := strings.Join(ids, " "); got != "pause-operator delete-leftover-pvcs/c-dc1-r1-2 delete-leftover-pvcs/c-dc1-r1-1 update-cluster resume-operator" {
		t.Fatalf("steps %s", got)
	}
	out, err := Encode(cp, kinds)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(out, "uid", kinds)
	if err != nil || len(back.Leftovers) != 2 || len(back.Nodes) != 0 || !strings.Contains(out, `"schemaVersion":1,`) {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	if l, ok := back.Leftover("c-dc1-r1-1"); !ok || l.PVCs[0].UID != "u1" {
		t.Fatalf("leftover of c-dc1-r1-1: %+v", l)
	}
	for _, tc := range []struct {
		name   string
		change func(cp *record.Checkpoint)
		want   string
	}{
		{"claims not in the plan", func(cp *record.Checkpoint) { cp.Leftovers = cp.Leftovers[:1] }, "has no left-over claims in the plan"},
		{"a claim without UID", func(cp *record.Checkpoint) { cp.Leftovers[0].PVCs[0].UID = "" }, "without name or UID"},
		{"also a node", func(cp *record.Checkpoint) {
			cp.Nodes = []record.Node{{Pod: "c-dc1-r1-2", PodUID: "p", StatefulSet: "c-dc1-r1", Ordinal: 2}}
		}, "planned twice"},
		{"a node step on a left-over pod", func(cp *record.Checkpoint) {
			cp.Steps = append(cp.Steps, PendingStep(record.StepDeletePVCs, "c-dc1-r1-2"))
		}, "not in the plan"},
	} {
		bad, _ := Decode(out, "", kinds)
		tc.change(bad)
		if err := Validate(bad, "", kinds); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
