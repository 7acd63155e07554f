package operation

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// BuildSteps returns the implementations of the steps of the checkpoint of w, a
// checkpoint of kind k, through the World as a kind sees it.
func BuildSteps(k pub.Kind, w *steps.World) (map[string]pub.Step, error) {
	return k.BuildSteps(w.ForKind())
}

// CommonAccess is what every operation needs first: read the cluster and write the
// checkpoint (patchWhy says what else the patch writes), list the pods, run nodetool,
// read the StatefulSets.
func CommonAccess(ns string, cr schema.GroupResource, patchWhy string) []pub.Access {
	return []pub.Access{
		{Group: cr.Group, Resource: cr.Resource, Verb: "get", Namespace: ns, Why: "read the cluster and its checkpoint"},
		{Group: cr.Group, Resource: cr.Resource, Verb: "patch", Namespace: ns, Why: patchWhy},
		{Resource: "pods", Verb: "list", Namespace: ns, Why: "find the rack's pods"},
		{Resource: "pods", Subresource: "exec", Verb: "create", Namespace: ns, Why: "run nodetool"},
		{Group: "apps", Resource: "statefulsets", Verb: "get", Namespace: ns, Why: "read the rack's StatefulSet"},
	}
}

// Offered are the operation kinds op offers beyond the ones every operator gets (an
// operator's own, written under plugins/, or a test's), none when it offers none.
func Offered(op operator.Operator) []pub.Kind {
	if o, ok := op.(pub.Offerer); ok {
		return o.Kinds()
	}
	return nil
}

// PlannerOf is the Planner env plans with: the plugin's own kinds read the world
// through it beyond what the Toolkit names (racks, rings, Cassandra). The Toolkit of
// every Env the plugin makes is its Planner; any other is a programming error.
func PlannerOf(env *pub.Env) *Planner { return plannerOf(env.Toolkit) }

func plannerOf(t pub.Toolkit) *Planner {
	p, ok := t.(*Planner)
	if !ok {
		panic(fmt.Sprintf("operation: the Toolkit is a %T, not the plugin's *Planner", t))
	}
	return p
}

// Registry is the table of the operation kinds a build supports, by name: the plugin's
// own and the ones its operators offer, all written against pkg/operation.
type Registry struct {
	kinds map[string]pub.Kind
	order []pub.Kind
}

// NewRegistry registers kinds (internal/operation/kinds composes the table).
func NewRegistry(kinds ...pub.Kind) Registry {
	r := Registry{kinds: map[string]pub.Kind{}}
	for _, k := range kinds {
		r.kinds[k.Info().Name] = k
		r.order = append(r.order, k)
	}
	return r
}

// All lists the registered kinds in the order they were registered.
func (r Registry) All() []pub.Kind { return r.order }

// Kind looks the kind name up.
func (r Registry) Kind(name string) (pub.Kind, bool) {
	k, ok := r.kinds[name]
	return k, ok
}

// MustKind looks up a kind this build registers by construction (the CLI's own
// commands); a missing one is a programming error.
func (r Registry) MustKind(name string) pub.Kind {
	k, ok := r.kinds[name]
	if !ok {
		panic(fmt.Sprintf("operation kind %q is not registered", name))
	}
	return k
}

// Of is the kind of checkpoint cp, or an error saying the build cannot run it.
func (r Registry) Of(cp *record.Checkpoint) (pub.Kind, error) {
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
func CountSteps(cp *record.Checkpoint, kind string) int {
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
func PauseAccess(acc []pub.Access, pause *record.PausedOperator) []pub.Access {
	if pause != nil {
		acc = append(acc, pub.Access{Group: "apps", Resource: "deployments", Verb: "patch", Namespace: pause.Namespace, Why: "pause and restore the operator"})
	}
	return acc
}

// Scale is what the scale kinds (scale-down, scale-up) say alike; they embed it.
type Scale struct{}

// Target implements pkg/operation's Kind: "datacenter DC racks R -> N nodes".
func (Scale) Target(t record.Target) string {
	if t.Size > 0 {
		return fmt.Sprintf("datacenter %s -> size %d (%s)", t.DC, t.Size, topology.CountsText(t.RackNodes))
	}
	return fmt.Sprintf("datacenter %s racks %s -> %d nodes", t.DC, strings.Join(t.Racks, ","), t.Nodes)
}

// PlanLines implements pkg/operation's Kind: a line per rack, "rack R: FROM -> TO nodes".
func (Scale) PlanLines(cp *record.Checkpoint, _ []string) []string {
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
func (Scale) NewScalePlan(env *pub.Env) (*pub.Plan, error) {
	dc, racks, err := SelectRacks(env.Cluster, env.Request, env.Adapter)
	if err != nil {
		return nil, err
	}
	return &pub.Plan{Cluster: env.Cluster, DC: dc, Racks: racks}, nil
}
