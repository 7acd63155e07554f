package operation

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// toolkit is the plugin's Toolkit (pkg/operation) for an adopted kind planning against
// env: the Planner's reads and the plan parts every kind shares, as the plugin's own
// kinds use them.
type toolkit struct {
	p    *Planner
	env  *Env
	kind Kind
}

func (t toolkit) Kube() kubernetes.Interface { return t.p.Kube }

func (t toolkit) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	return t.p.Pod(ctx, ns, name)
}

func (t toolkit) Claim(ctx context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
	return t.p.Claim(ctx, ns, name)
}

func (t toolkit) Replicas(ctx context.Context, ns, name string) (int, error) {
	return t.p.Replicas(ctx, ns, name)
}

func (t toolkit) RackPods(ctx context.Context, ns string, r topology.Rack) (map[int]corev1.Pod, error) {
	return t.p.RackPods(ctx, ns, r)
}

func (t toolkit) HostID(ctx context.Context, pod string) (string, error) {
	info, err := t.p.Nodetool.Info(ctx, pod)
	return info.ID, err
}

func (t toolkit) Mode(ctx context.Context, pod string) (nodetool.Mode, error) {
	ns, err := t.p.Nodetool.Netstats(ctx, pod)
	return ns.Mode, err
}

func (t toolkit) RingExcept(ctx context.Context, ns, selector, except string) (nodetool.Ring, string, []string, error) {
	return steps.RingExcept(ctx, t.p.Kube, t.p.Nodetool, ns, selector, except)
}

func (t toolkit) NewCheckpoint(idPrefix string) *checkpoint.Checkpoint {
	return t.p.NewCheckpoint(t.env.Cluster, t.kind, idPrefix, t.env.Request)
}

func (toolkit) CommonAccess(ns string, cr schema.GroupResource, patchWhy string) []Access {
	return CommonAccess(ns, cr, patchWhy)
}

func (toolkit) PauseAccess(acc []Access, pause *checkpoint.PausedOperator) []Access {
	return PauseAccess(acc, pause)
}

func (toolkit) PauseWarnings(pause *checkpoint.PausedOperator, kind string) []string {
	return PauseWarnings(pause, kind)
}

func (toolkit) Paused(pause bool, list []checkpoint.Step) []checkpoint.Step {
	return checkpoint.Paused(pause, list)
}
