package model

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/kinds"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/replacenode"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaledown"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// modelSteps runs the model in spin's simulator with PRINT_STEPS: its init builds the
// step list (build_scale_down) and prints it, one "MODEL-STEP kind pod" line a step.
func modelSteps(t *testing.T, defines ...string) []string {
	t.Helper()
	return modelStepsOf(t, modelFile, defines...)
}

// modelStepsOf is modelSteps of the model in file.
func modelStepsOf(t *testing.T, file string, defines ...string) []string {
	t.Helper()
	spin, err := exec.LookPath("spin")
	if err != nil {
		t.Skip("spin is not installed (apt-get install spin): cannot read the model's step list")
	}
	args := append(append([]string{"-DPRINT_STEPS"}, defines...), file)
	out, err := exec.Command(spin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("spin %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var steps []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "MODEL-STEP" {
			continue
		}
		// Promela names cannot hold '-': the model writes the code's step kinds with '_'.
		kind := strings.ReplaceAll(f[1], "_", "-")
		steps = append(steps, record.StepID(kind, podName(f[2])))
	}
	if len(steps) == 0 {
		t.Fatalf("the model printed no step list:\n%s", out)
	}
	return steps
}

// podName names the model's pod ordinal ("-" for a step about no pod) as the plan does.
func podName(ord string) string {
	if ord == "-" {
		return ""
	}
	return "c-dc1-rack1-" + ord
}

// codeSteps is the code's step list for the model's scale-down, 3 -> 1 of one rack
// (pods 2 then 1, the highest ordinal first, as operation.planScaleDown orders them),
// from the function the planner builds it with.
func codeSteps(pause bool) []string {
	var nodes []record.Node
	for _, ord := range []int{2, 1} {
		nodes = append(nodes, record.Node{Pod: podName(fmt.Sprint(ord)), Ordinal: ord, StatefulSet: "c-dc1-rack1"})
	}
	var ids []string
	for _, s := range scaledown.Steps(nodes, pause) {
		ids = append(ids, s.ID)
	}
	return ids
}

// TestModelStepsMatchCode: the model runs the same steps, in the same order, as the
// code plans for a scale-down, with and without the operator pause.
func TestModelStepsMatchCode(t *testing.T) {
	for _, c := range []struct {
		name    string
		pause   bool
		defines []string
	}{
		{"with-pause", true, nil},
		{"without-pause", false, []string{"-DNOPAUSESTEP"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, want := modelSteps(t, c.defines...), codeSteps(c.pause)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("the model's scale-down steps differ from scaledown.Steps:\nmodel: %s\ncode:  %s\nupdate model/%s (build_scale_down and the step semantics) with the code",
					strings.Join(got, " "), strings.Join(want, " "), modelFile)
			}
			// Every kind the model names is a step kind of a scale-down checkpoint.
			cp := &record.Checkpoint{SchemaVersion: 1, OperationID: "model", Kind: checkpoint.KindScaleDown,
				Namespace: "ns", Cluster: "c", ClusterUID: "u", Target: record.Target{Nodes: 1},
				PausedOperator: &record.PausedOperator{Name: "casskop"}}
			for _, ord := range []int{2, 1} {
				cp.Nodes = append(cp.Nodes, record.Node{Pod: podName(fmt.Sprint(ord)), PodUID: "uid", Ordinal: ord, StatefulSet: "c-dc1-rack1"})
			}
			for _, id := range got {
				kind, pod, _ := strings.Cut(id, "/")
				cp.Steps = append(cp.Steps, checkpoint.PendingStep(kind, pod))
			}
			if err := checkpoint.Validate(cp, "", kinds.Registry().Schemas()); err != nil {
				t.Fatalf("the model's steps are not a valid scale-down checkpoint: %v", err)
			}
			t.Logf("%d steps: %s", len(got), strings.Join(got, " "))
		})
	}
}

// TestModelDrivenStepsMatchCode: driven.pml's replace runs the code's steps of a replace
// through the operator's task (replacenode.Steps), in the same order. The model's
// set-throughput and restore-throughput stand for --stream-throughput's steps on the
// sources (record, set, restore per source pod in the code): they are left out of the
// comparison. The scale-down's driven list (scaledown.drivenSteps) is not exported and
// not compared.
func TestModelDrivenStepsMatchCode(t *testing.T) {
	var got []string
	for _, id := range modelStepsOf(t, drivenFile) {
		kind, _, _ := strings.Cut(id, "/")
		if kind == "set-throughput" || kind == "restore-throughput" {
			continue
		}
		got = append(got, id)
	}
	var want []string
	for _, s := range replacenode.Steps(&record.Replacement{Pod: podName("1"), Task: "task"}, false) {
		want = append(want, s.ID)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("driven.pml's replace steps differ from replacenode.Steps (task):\nmodel: %s\ncode:  %s\nupdate model/%s (build and the step semantics) with the code",
			strings.Join(got, " "), strings.Join(want, " "), drivenFile)
	}
	t.Logf("%d steps: %s", len(got), strings.Join(got, " "))
}
