package cli

import (
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// TestAbortDescribesTheOperatorTruly: abort says the operator "will be restored" only
// when this operation holds it paused. Crashed right after its first write (the
// checkpoint, before the pause), abort says nothing of a restore and writes the
// Deployment never; crashed once paused, it says so and restores it once.
func TestAbortDescribesTheOperatorTruly(t *testing.T) {
	const restored = "The operator Deployment cassandra/casskop will be restored to 1 replicas."
	opts := world.Opts{Nodes: 3, Operator: true}
	// The side effect that pauses the operator, from a reference run.
	ref, paused := world.New(t, opts), 0
	ref.OnSideEffect = func(n int) {
		if paused == 0 && len(ref.PausedBy("casskop")) > 0 {
			paused = n
		}
	}
	if _, stderr, code, _ := run(ref, 0, scaleTo(2)...); code != 0 || paused < 2 {
		t.Fatalf("reference run: exit %d, paused at side effect %d\n%s", code, paused, stderr)
	}
	for _, tc := range []struct {
		name    string
		crashAt int
		want    bool
		history []int32
	}{{"before the pause", 1, false, []int32{1}}, {"paused", paused, true, []int32{1, 0, 1}}} {
		t.Run(tc.name, func(t *testing.T) {
			w := world.New(t, opts)
			op := w.RecordReplicas("casskop")
			if _, _, _, crashed := run(w, tc.crashAt, scaleTo(2)...); !crashed {
				t.Fatal("no crash")
			}
			if got := len(w.PausedBy("casskop")) > 0; got != tc.want {
				t.Fatalf("crash point: operator held %v, want %v", got, tc.want)
			}
			_, stderr, code, _ := run(w, 0, abortDemo...)
			if code != 0 {
				t.Fatalf("abort: exit %d\n%s", code, stderr)
			}
			if got := strings.Contains(stderr, restored); got != tc.want {
				t.Errorf("abort says the operator will be restored: %v, want %v\n%s", got, tc.want, stderr)
			}
			assertHistory(t, op, tc.name, tc.history...)
			assertNoHolders(t, w, tc.name)
		})
	}
}
