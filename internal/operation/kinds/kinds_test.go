package kinds

import (
	"slices"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
)

// The checkpoint's decode (internal/checkpoint/checkpoint.go) checks the schema and the
// step kinds of each operation kind on its own, without knowing the kinds' packages:
// every registered kind must say the same.
func TestKindsAgreeWithCheckpoint(t *testing.T) {
	r := Registry()
	names := r.Names()
	if len(names) != 4 {
		t.Fatalf("registered kinds %v, want 4", names)
	}
	for _, name := range names {
		info := r.MustKind(name).Info()
		if info.Name != name {
			t.Errorf("kind %s registered as %s", info.Name, name)
		}
		if info.Schema != checkpoint.SchemaFor(name) {
			t.Errorf("%s: schema %d, the checkpoint's decode wants %d", name, info.Schema, checkpoint.SchemaFor(name))
		}
		got := slices.Sorted(slices.Values(info.StepKinds))
		if want := checkpoint.AllowedSteps(name); !slices.Equal(got, want) {
			t.Errorf("%s: step kinds %v, the checkpoint's decode allows %v", name, got, want)
		}
		if info.StepsHeader == "" || info.ConfirmWord == "" {
			t.Errorf("%s: no plan wording", name)
		}
	}
}
