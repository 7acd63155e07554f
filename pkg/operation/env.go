package operation

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Env is what a kind plans against: the cluster, its operator, the request, and the
// plugin's Toolkit.
type Env struct {
	Toolkit
	Cluster topology.Cluster
	// Adapter is the cluster's operator (a kind may need more of it, e.g.
	// operator.StatusRepair).
	Adapter operator.Adapter
	Request Request
	// InFlight is the operation in flight the plan absorbs (InFlight.Absorb), nil
	// otherwise.
	InFlight *record.Checkpoint
}

// Toolkit is what the plugin lends a kind to plan with: its reads of the world and the
// parts of a plan every kind shares. A read of an object that does not exist is
// (nil, nil), so a kind tells "gone" from "cannot read"; a failed read is an error
// naming the object.
type Toolkit interface {
	// Kube is the cluster's API, for reads the Toolkit has no name for.
	Kube() kubernetes.Interface
	// Pod and Claim read one pod or PersistentVolumeClaim.
	Pod(ctx context.Context, ns, name string) (*corev1.Pod, error)
	Claim(ctx context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error)
	// Replicas reads a StatefulSet's spec.replicas (1 when unset, as the API defaults it).
	Replicas(ctx context.Context, ns, name string) (int, error)
	// RackPods maps ordinal to pod for the pods of a rack.
	RackPods(ctx context.Context, ns string, r topology.Rack) (map[int]corev1.Pod, error)
	// HostID and Mode ask the node of pod (`nodetool info`, `nodetool netstats`); a node
	// that cannot be reached is a *nodetool.UnreachableError.
	HostID(ctx context.Context, pod string) (string, error)
	Mode(ctx context.Context, pod string) (nodetool.Mode, error)
	// RingExcept reads the ring from the Ready pods selected by selector other than
	// except, in name order, the first successful, non-empty read. reader is "" when none
	// answered; failed then says why each failed (none: there was no candidate). err is
	// a failed pod list.
	RingExcept(ctx context.Context, ns, selector, except string) (r nodetool.Ring, reader string, failed []string, err error)
	// NewCheckpoint fills what every checkpoint of kind k has for cluster cl and request
	// req (ID, holder, times, the pause); the kind adds target, nodes and steps.
	// idPrefix begins the operation's ID ("repair").
	NewCheckpoint(cl topology.Cluster, k Kind, idPrefix string, req Request) *record.Checkpoint
	// CommonAccess is what every operation needs first: read the cluster and write the
	// checkpoint (patchWhy says what else the patch writes), list the pods, run nodetool,
	// read the StatefulSets.
	CommonAccess(ns string, cr schema.GroupResource, patchWhy string) []Access
	// PauseAccess is acc plus what pausing the operator needs, when pause is set.
	PauseAccess(acc []Access, pause *record.PausedOperator) []Access
	// PauseWarnings say what pausing the operator leaves unmanaged besides the cluster
	// (a plan shows them); kind names the cluster resource.
	PauseWarnings(pause *record.PausedOperator, kind string) []string
	// Paused is steps with the operator's pause and restore around them when pause is
	// set (record.StepPauseOperator, record.StepResumeOperator).
	Paused(pause bool, steps []record.Step) []record.Step
}
