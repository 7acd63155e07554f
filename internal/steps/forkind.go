package steps

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// ForKind is w as a kind sees it (operation.World): its steps read the world through
// the same reads as the library's steps, and build those through Core.
func (w *World) ForKind() operation.World { return forKind{w} }

// Of is the World behind kw (ForKind): the plugin's own kinds build their steps from
// it (Build), their own steps included. A World not made by ForKind is an error.
func Of(kw operation.World) (*World, error) {
	k, ok := kw.(forKind)
	if !ok {
		return nil, fmt.Errorf("steps: a %T is not the plugin's World", kw)
	}
	return k.w, nil
}

// forKind implements operation.World on a World.
type forKind struct{ w *World }

func (k forKind) Checkpoint() *record.Checkpoint { return k.w.CP }
func (k forKind) Kube() kubernetes.Interface     { return k.w.Kube }
func (k forKind) ClusterSelector() string        { return k.w.ClusterSelector }
func (k forKind) Racks() []topology.Rack         { return k.w.Racks }
func (k forKind) ResourceKind() string           { return k.w.resourceKind() }

func (k forKind) Scaler() operator.Scaler { return k.w.Scaler }

func (k forKind) OperatorStatus() operator.OperatorState { return k.w.Operator }

func (k forKind) Pod(ctx context.Context, name string) (*corev1.Pod, error) {
	return k.w.getPod(ctx, name)
}

// ClaimsLeft is deletePVCs' reading: the claims of n as the run last recorded them.
func (k forKind) ClaimsLeft(ctx context.Context, n record.Node) ([]corev1.PersistentVolumeClaim, error) {
	return k.w.claimsLeft(ctx, k.w.current(n).PVCs)
}

func (k forKind) Mode(ctx context.Context, pod string) (nodetool.Mode, error) {
	ns, err := k.w.Nodetool.Netstats(ctx, pod)
	return ns.Mode, err
}

func (k forKind) Ring(ctx context.Context) (nodetool.Ring, string, error) { return k.w.ring(ctx) }

func (k forKind) RingExcept(ctx context.Context, except string) (nodetool.Ring, string, []string, error) {
	return RingExcept(ctx, k.w.Kube, k.w.Nodetool, k.w.CP.Namespace, k.w.ClusterSelector, except)
}

func (k forKind) Core(v operation.Variant, s record.Step) (operation.Step, error) {
	return BuildOne(k.w, Variant{Repair: v.Repair, Driven: v.Driven}, s)
}

// Own builds the implementation of one step of a kind's own, or returns nil, nil for a
// step that is not the kind's (the library's, built by BuildOne).
type Own func(s record.Step) (operation.Step, error)

// BuildKind builds every step of w's checkpoint: own builds the kind's own, BuildOne
// (variant v) the rest. A kind's BuildSteps is then only its own steps' switch.
func BuildKind(w *World, v Variant, own Own) (map[string]operation.Step, error) {
	out := map[string]operation.Step{}
	for _, s := range w.CP.Steps {
		st, err := own(s)
		if err != nil {
			return nil, err
		}
		if st == nil {
			if st, err = BuildOne(w, v, s); err != nil {
				return nil, err
			}
		}
		out[s.ID] = st
	}
	return out, nil
}
