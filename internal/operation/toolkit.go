package operation

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// The Planner's methods that make it pkg/operation's Toolkit, beside its reads
// (reads.go) and NewCheckpoint (plan.go).

// Kube is the cluster's API.
func (p *Planner) Kube() kubernetes.Interface { return p.Client }

// HostID asks the node of pod its Host ID (`nodetool info`).
func (p *Planner) HostID(ctx context.Context, pod string) (string, error) {
	info, err := p.Nodetool.Info(ctx, pod)
	return info.ID, err
}

// Mode asks the node of pod its mode (`nodetool netstats`).
func (p *Planner) Mode(ctx context.Context, pod string) (nodetool.Mode, error) {
	ns, err := p.Nodetool.Netstats(ctx, pod)
	return ns.Mode, err
}

// RingExcept reads the ring from the Ready pods selected by selector other than except
// (steps.RingExcept).
func (p *Planner) RingExcept(ctx context.Context, ns, selector, except string) (nodetool.Ring, string, []string, error) {
	return steps.RingExcept(ctx, p.Client, p.Nodetool, ns, selector, except)
}

// CommonAccess is the package's CommonAccess.
func (*Planner) CommonAccess(ns string, cr schema.GroupResource, patchWhy string) []operation.Access {
	return CommonAccess(ns, cr, patchWhy)
}

// PauseAccess is the package's PauseAccess.
func (*Planner) PauseAccess(acc []operation.Access, pause *record.PausedOperator) []operation.Access {
	return PauseAccess(acc, pause)
}

// PauseWarnings is the package's PauseWarnings.
func (*Planner) PauseWarnings(pause *record.PausedOperator, kind string) []string {
	return PauseWarnings(pause, kind)
}

// Paused is checkpoint.Paused.
func (*Planner) Paused(pause bool, list []record.Step) []record.Step {
	return checkpoint.Paused(pause, list)
}
