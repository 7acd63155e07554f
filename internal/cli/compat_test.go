package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// TestResumeSchema1Checkpoint resumes a checkpoint written by the plugin before schema
// 2 (internal/checkpoint/testdata/v1-scale-down.json: a 3 -> 1 scale-down with the operator
// paused, killed while decommissioning its first node), in a world where that
// checkpoint was written: it must finish the scale-down.
func TestResumeSchema1Checkpoint(t *testing.T) {
	b, err := os.ReadFile("../checkpoint/testdata/v1-scale-down.json")
	if err != nil {
		t.Fatal(err)
	}
	w := world.New(t, world.Opts{Nodes: 3, Operator: true})
	// The run that wrote it (pid 1001 on test-host) is gone.
	w.EndProcess(w.StartProcess())
	setAnnotation(t, w, checkpoint.Annotation, strings.TrimSpace(string(b)))
	stdout, _, code, _ := run(w, 0, "status", "demo", "-n", "cassandra")
	if code != 0 || !strings.Contains(stdout, "scale-down scale-20261202-152729-49shm, datacenter dc1 racks rack1 -> 1 nodes, step 1/13 done") {
		t.Fatalf("status of a schema 1 checkpoint: %d\n%s", code, stdout)
	}
	_, stderr, code, _ := run(w, 0, resume...)
	if code != 0 || !strings.Contains(stderr, "decommission demo-dc1-rack1-2") {
		t.Fatalf("resume of a schema 1 checkpoint: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(1, "schema 1 checkpoint resumed")
	if w.DeploymentReplicas("casskop") != 1 {
		t.Fatal("operator not restored")
	}
}
