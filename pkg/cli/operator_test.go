package cli

import (
	"reflect"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// restorePoint is the side effect number of the operator's restore in a reference run
// (the last write to its Deployment).
func restorePoint(t *testing.T, ref *world.World) int {
	t.Helper()
	k := 0
	for i, ev := range ref.History() {
		if ev.Kind == "write" && ev.Resource == "deployments" {
			k = i + 1
		}
	}
	if k == 0 {
		t.Fatal("the reference run never wrote the operator Deployment")
	}
	return k
}

// TestResumeAfterOperatorRestore kills each kind of operation right after the write
// that restored the operator, before the restore's done mark and the checkpoint's
// removal reached the server; the resume must finish without pausing the operator
// again: its replica history is exactly 1 -> 0 -> 1 (it was 1 -> 0 -> 1 -> 0 -> 1 for
// a scale-down, whose pause step did not know the restore had run).
func TestResumeAfterOperatorRestore(t *testing.T) {
	cases := []struct {
		name string
		opts world.Opts
		args []string
	}{
		{name: "scale-down", opts: world.Opts{Nodes: 3, Operator: true}, args: []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--yes"}},
		{name: "scale-up", opts: world.Opts{Nodes: 1, Operator: true}, args: []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "2", "--yes"}},
		{name: "restart", opts: world.Opts{Nodes: 2, Operator: true, StartTime: time.Millisecond}, args: []string{"restart", "demo", "-n", "cassandra", "--rack", "rack1", "--yes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ref := world.New(t, tc.opts)
			if _, stderr, code, crashed := run(ref, 0, tc.args...); code != 0 || crashed {
				t.Fatalf("reference run: code %d crashed %v\n%s", code, crashed, stderr)
			}
			k := restorePoint(t, ref)
			w := world.New(t, tc.opts)
			if _, stderr, _, crashed := run(w, k, tc.args...); !crashed {
				t.Fatalf("crash point %d (the restore) not reached\n%s", k, stderr)
			}
			if cp := loadCP(t, w); cp == nil {
				t.Fatal("the crashed run left no checkpoint")
			}
			if _, stderr, code, crashed := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 || crashed {
				t.Fatalf("resume: code %d\n%s", code, stderr)
			}
			if got := w.OperatorReplicas("casskop"); !reflect.DeepEqual(got, []int32{1, 0, 1}) {
				t.Fatalf("operator replica history %v, want [1 0 1]", got)
			}
			if loadCP(t, w) != nil {
				t.Fatal("checkpoint left after the resume")
			}
			t.Logf("crash after the operator restore (side effect %d), resumed: operator history 1 -> 0 -> 1", k)
		})
	}
}
