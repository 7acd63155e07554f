package operation

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Step is one small action with two questions about the real world. The plugin's engine
// writes "started" before Do, and on resume asks Done again: nothing else decides
// progress.
type Step interface {
	// Done reports whether the real world already shows the step's effect. An error
	// means "unknown" and is never taken as done.
	Done(ctx context.Context) (bool, error)
	// Safe returns an error when acting now would be unsafe (it is re-checked right
	// before every attempt, from the real world).
	Safe(ctx context.Context) error
	// Do performs the action once. It must be idempotent: the run may have died right
	// after a previous Do.
	Do(ctx context.Context) error
}

// Evident is implemented by steps whose effect the world shows in full (Done alone
// tells whether the action happened: a label, a claim being deleted). The engine
// records their start in memory and lets the next checkpoint write carry it: a crash in
// between leaves them "pending", and resume asks the world anyway.
type Evident interface {
	Evident()
}

// Describer says what a step does, in progress lines and plans.
type Describer interface {
	Describe() string
}

// PlanTexter is a step that says more in a plan, before it runs, than its Describe says
// in progress lines. The plan shows PlanText when a step has it, else Describe.
type PlanTexter interface {
	PlanText() string
}

// Retryable marks a Do error after which the action may be attempted again.
type Retryable struct{ Err error }

func (r *Retryable) Error() string { return r.Err.Error() }
func (r *Retryable) Unwrap() error { return r.Err }

// Fatal marks an error that stops the run at once (a refusal by the world, a broken
// invariant); it carries the exit code the command should return (ExitRefused).
type Fatal struct {
	Err  error
	Code int
}

func (f *Fatal) Error() string { return f.Err.Error() }
func (f *Fatal) Unwrap() error { return f.Err }

// World is what the plugin hands a kind's steps: the checkpoint they run, the cluster's
// API and operator, the run's reads of the world, and the plugin's own step library.
type World interface {
	// Checkpoint is the checkpoint being run; the engine amends it as steps go.
	Checkpoint() *record.Checkpoint
	// Kube is the cluster's API.
	Kube() kubernetes.Interface
	// ClusterSelector selects every pod of the cluster; Racks are every rack of the
	// target datacenter; ResourceKind names the cluster resource ("CassandraCluster").
	ClusterSelector() string
	Racks() []topology.Rack
	ResourceKind() string
	// Scaler is the operator when it scales the datacenter itself (nil otherwise);
	// OperatorStatus reads and repairs its per-rack status when it keeps one (nil
	// otherwise: operator.StatusRepair).
	Scaler() operator.Scaler
	OperatorStatus() operator.OperatorState
	// Pod reads the pod, as this run last saw it since a step acted ((nil, nil): gone).
	Pod(ctx context.Context, name string) (*corev1.Pod, error)
	// ClaimsLeft lists the planned claims of n that still exist with their planned UID.
	ClaimsLeft(ctx context.Context, n record.Node) ([]corev1.PersistentVolumeClaim, error)
	// Mode asks the node of pod its mode (`nodetool netstats`).
	Mode(ctx context.Context, pod string) (nodetool.Mode, error)
	// Ring reads the ring from a Ready pod outside the plan; an unreadable ring is an
	// error, never "the node left".
	Ring(ctx context.Context) (r nodetool.Ring, reader string, err error)
	// RingExcept reads the ring from a Ready pod of the cluster other than except (as
	// Toolkit.RingExcept).
	RingExcept(ctx context.Context, except string) (r nodetool.Ring, reader string, failed []string, err error)
	// Core is the library's implementation of a step record of one of its kinds
	// (record.StepDecommission, …), as v makes it.
	Core(v Variant, s record.Step) (Step, error)
}

// Variant is how a kind's steps of the plugin's library differ from the same steps in
// other kinds.
type Variant struct {
	// Repair: the steps finish a decommission the operator started and left stuck: the
	// plan says the decommission was already fired, the claims are deleted only while no
	// pod mounts them, and the operator is restored without waiting for the cluster
	// resource and the StatefulSets to agree (it continues its own scale-down).
	Repair bool
	// Driven: the operator acts (operator.Scaler); the steps ask it and verify, and the
	// waits watch it for its stuck states.
	Driven bool
}
