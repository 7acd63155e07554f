package kinds

import (
	"slices"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/adddc"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/removedc"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/replacenode"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/restart"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaledown"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaleup"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// extra stands for a kind an operator offers (CassKop's repair-operator-state).
type extra struct{ scaledown.Kind }

func (extra) Info() pub.Info {
	return pub.Info{Name: "extra", Checkpoint: record.Schema{Version: 2, Steps: []string{restart.StepDrain}},
		StepsHeader: "Steps:", ConfirmWord: "Extra"}
}

// Every kind says what its checkpoint may hold and how its plan is worded; the
// checkpoint's decode learns the kinds only from the registry (Schemas), so an
// operator's extra kind is decoded like the built-in ones.
func TestRegistry(t *testing.T) {
	r := Registry(extra{})
	names := r.Names()
	if !slices.Equal(names, []string{adddc.Name, "extra", removedc.Name, replacenode.Name, restart.Kind{}.Info().Name, checkpoint.KindScaleDown, scaleup.Name}) {
		t.Fatalf("registered kinds %v", names)
	}
	schemas := r.Schemas()
	for _, name := range names {
		info := r.MustKind(name).Info()
		if info.Name != name {
			t.Errorf("kind %s registered as %s", info.Name, name)
		}
		if info.Checkpoint.Version < 1 || len(info.Checkpoint.Steps) == 0 {
			t.Errorf("%s: checkpoint schema %+v", name, info.Checkpoint)
		}
		if !slices.Equal(schemas[name].Steps, info.Checkpoint.Steps) {
			t.Errorf("%s: Schemas says %+v", name, schemas[name])
		}
		if info.StepsHeader == "" || info.ConfirmWord == "" {
			t.Errorf("%s: no plan wording", name)
		}
	}
	if schemas[checkpoint.KindScaleDown].Version != 1 {
		t.Error("a scale-down must stay readable by schema 1 plugins")
	}
	if len(Registry().Names()) != 6 {
		t.Errorf("without extra kinds: %v", Registry().Names())
	}
}
