package operation

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Kind is one kind of operation (scale-down, scale-up, restart, …): everything that
// differs between kinds, so that the CLI, resume and abort look a kind up in a Registry
// instead of switching on its name. Each kind is one package under internal/operation;
// adding a kind is one package and one line in internal/operation/kinds.
type Kind interface {
	// Info is what the kind is, as data.
	Info() Info
	// Plan reads the real world and plans the operation. It changes nothing.
	Plan(ctx context.Context, env *Env) (*Plan, error)
	// Access lists the permissions the operation uses (checked before planning).
	Access(ctx context.Context, env *Env) ([]Access, error)
	// Summary says in one line what a finished operation did.
	Summary(cp *checkpoint.Checkpoint) string
	// Target says what the operation does to which racks, for status and refusals.
	Target(t checkpoint.Target) string
	// PlanLines are the plan's lines between its title and its steps (per rack, or
	// what was found).
	PlanLines(cp *checkpoint.Checkpoint, findings []string) []string
}

// Info is what a kind is, as data.
type Info struct {
	// Name is the kind as checkpoints record it (checkpoint.KindScaleDown, …).
	Name string
	// Checkpoint is what its checkpoint may hold: the schema version a new operation
	// is written with and its step kinds (the checkpoint's decode checks them:
	// Registry.Schemas).
	Checkpoint checkpoint.Schema
	// StepsHeader introduces the step list of a plan; ConfirmWord is the question asked
	// before the checkpoint is created ("Scale down").
	StepsHeader, ConfirmWord string
	// Abort says when an operation of the kind may be aborted.
	Abort Abort
	// Steps is how the kind's steps differ from the same steps in other kinds
	// (BuildSteps).
	Steps steps.Variant
	// Operator, for a kind an operator offers (Offerer), is that operator's name: several
	// operators may offer a kind under one command (repair-operator-state), and the CLI
	// runs the one of the cluster's operator. "" for the kinds every operator gets.
	Operator string
}

// StepBuilder is a kind that builds the implementations of its checkpoint's steps
// itself (an operator's kind, adopted: adopt.go), the core library's ones through
// steps.BuildOne.
type StepBuilder interface {
	BuildSteps(w *steps.World) (map[string]engine.Step, error)
}

// BuildSteps returns the implementations of the steps of cp, a checkpoint of kind k.
func BuildSteps(k Kind, w *steps.World) (map[string]engine.Step, error) {
	if b, ok := k.(StepBuilder); ok {
		return b.BuildSteps(w)
	}
	return steps.Build(w, k.Info().Steps)
}

// CommonAccess is what every operation but a scale-down needs first: read the cluster
// and write the checkpoint (patchWhy says what else the patch writes), list the pods,
// run nodetool, read the StatefulSets.
func CommonAccess(ns string, cr schema.GroupResource, patchWhy string) []Access {
	return []Access{
		{Group: cr.Group, Resource: cr.Resource, Verb: "get", Namespace: ns, Why: "read the cluster and its checkpoint"},
		{Group: cr.Group, Resource: cr.Resource, Verb: "patch", Namespace: ns, Why: patchWhy},
		{Resource: "pods", Verb: "list", Namespace: ns, Why: "find the rack's pods"},
		{Resource: "pods", Subresource: "exec", Verb: "create", Namespace: ns, Why: "run nodetool"},
		{Group: "apps", Resource: "statefulsets", Verb: "get", Namespace: ns, Why: "read the rack's StatefulSet"},
	}
}

// Env is what a kind plans against: the readers, the cluster, its operator and the
// request.
type Env struct {
	Planner *Planner
	Cluster topology.Cluster
	// Adapter is the cluster's operator (a kind may need more of it, e.g.
	// operator.StatusRepair).
	Adapter operator.Adapter
	Request Request
	// InFlight is the operation in flight the plan absorbs (InFlight.Absorb), nil
	// otherwise.
	InFlight *checkpoint.Checkpoint
}

// Offerer is an operator (operator.Operator) that offers operation kinds written
// against this package, beyond the ones every operator gets: a kind a test adds. An
// operator under plugins/ offers its own through pkg/operation's Offerer (Offered).
type Offerer interface {
	Kinds() []Kind
}

// Registry is the table of the operation kinds a build supports, by name.
type Registry struct {
	kinds map[string]Kind
	order []Kind
}

// NewRegistry registers kinds (internal/operation/kinds composes the table).
func NewRegistry(kinds ...Kind) Registry {
	r := Registry{kinds: map[string]Kind{}}
	for _, k := range kinds {
		r.kinds[k.Info().Name] = k
		r.order = append(r.order, k)
	}
	return r
}

// All lists the registered kinds in the order they were registered.
func (r Registry) All() []Kind { return r.order }

// Kind looks the kind name up.
func (r Registry) Kind(name string) (Kind, bool) {
	k, ok := r.kinds[name]
	return k, ok
}

// MustKind looks up a kind this build registers by construction (the CLI's own
// commands); a missing one is a programming error.
func (r Registry) MustKind(name string) Kind {
	k, ok := r.kinds[name]
	if !ok {
		panic(fmt.Sprintf("operation kind %q is not registered", name))
	}
	return k
}

// Of is the kind of checkpoint cp, or an error saying the build cannot run it.
func (r Registry) Of(cp *checkpoint.Checkpoint) (Kind, error) {
	if k, ok := r.kinds[cp.Kind]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("operation %s is a %q, which this build of the plugin does not know (it knows %s): upgrade the plugin; nothing changed",
		cp.OperationID, cp.Kind, strings.Join(r.Names(), ", "))
}

// Schemas are the registered kinds' checkpoint schemas, by name: what a checkpoint's
// decode accepts (checkpoint.Decode).
func (r Registry) Schemas() checkpoint.Schemas {
	out := checkpoint.Schemas{}
	for n, k := range r.kinds {
		out[n] = k.Info().Checkpoint
	}
	return out
}

// Names lists the registered kinds, sorted.
func (r Registry) Names() []string {
	var names []string
	for n := range r.kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CountSteps counts the steps of kind in cp (for summaries).
func CountSteps(cp *checkpoint.Checkpoint, kind string) int {
	n := 0
	for _, s := range cp.Steps {
		if s.Kind == kind {
			n++
		}
	}
	return n
}

// PauseAccess is acc plus what pausing the operator Deployment needs, when one is
// paused.
func PauseAccess(acc []Access, pause *checkpoint.PausedOperator) []Access {
	if pause != nil {
		acc = append(acc, Access{Group: "apps", Resource: "deployments", Verb: "patch", Namespace: pause.Namespace, Why: "pause and restore the operator"})
	}
	return acc
}

// Scale is what the scale kinds (scale-down, scale-up) say alike; they embed it.
type Scale struct{}

// Target implements Kind: "datacenter DC racks R -> N nodes".
func (Scale) Target(t checkpoint.Target) string {
	if t.Size > 0 {
		return fmt.Sprintf("datacenter %s -> size %d (%s)", t.DC, t.Size, topology.CountsText(t.RackNodes))
	}
	return fmt.Sprintf("datacenter %s racks %s -> %d nodes", t.DC, strings.Join(t.Racks, ","), t.Nodes)
}

// PlanLines implements Kind: a line per rack, "rack R: FROM -> TO nodes".
func (Scale) PlanLines(cp *checkpoint.Checkpoint, _ []string) []string {
	var lines []string
	if t := cp.Target; t.Size > 0 {
		// The operator splits a size over every rack: each rack's line.
		from := 0
		for _, n := range t.From {
			from += n
		}
		lines = append(lines, fmt.Sprintf("  datacenter %s: size %d -> %d (the operator removes or adds each node; the plugin asks for one at a time and verifies it)", t.DC, from, t.Size))
		for _, rack := range SortedKeys(t.From) {
			lines = append(lines, fmt.Sprintf("  rack %s: %d -> %d nodes", rack, t.From[rack], t.RackNodes[rack]))
		}
		return lines
	}
	for _, rack := range cp.Target.Racks {
		lines = append(lines, fmt.Sprintf("  rack %s: %d -> %d nodes", rack, cp.Target.From[rack], cp.Target.Nodes))
	}
	return lines
}

// NewScalePlan starts the plan of a scale: the datacenter and racks the request selects,
// once the operator said it can keep their new counts (SelectRacks).
func (Scale) NewScalePlan(env *Env) (*Plan, error) {
	dc, racks, err := SelectRacks(env.Cluster, env.Request, env.Adapter)
	if err != nil {
		return nil, err
	}
	return &Plan{Cluster: env.Cluster, DC: dc, Racks: racks}, nil
}
