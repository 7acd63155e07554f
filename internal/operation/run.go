package operation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/topology"
)

// Runner runs (or resumes) a checkpointed operation to its end.
type Runner struct {
	// Kind is the checkpoint's kind (Registry.Of).
	Kind     Kind
	Kube     kubernetes.Interface
	Nodetool steps.Nodetool
	Store    *checkpoint.Store
	Spec     steps.ClusterSpec
	// ClusterSelector selects all pods of the cluster; Racks are every rack of the
	// target DC; CountWords names the spec's count (operator.Counts).
	ClusterSelector string
	Racks           []topology.Rack
	CountWords      string
	// ResourceKind and Container name the cluster resource and the Cassandra container
	// in messages (operator.Adapter).
	ResourceKind, Container string
	ServerVersion           string
	Reporter                engine.Reporter
	Poll                    time.Duration
	StallAfter              time.Duration
	StepTimeout             time.Duration
	Lease                   time.Duration
	Now                     func() time.Time
	// SampleEvery is the shortest interval between progress reads while a
	// decommission call runs (steps.World.SampleEvery; 0: 5 s).
	SampleEvery time.Duration
	// Operator reads and repairs the operator's status (repair-operator-state).
	Operator steps.OperatorState
	// Deleting reports whether the cluster resource was last seen being deleted.
	Deleting func() bool

	eng *engine.Engine
}

// CurrentStep is the step being worked on (for interruption messages).
func (r *Runner) CurrentStep() string {
	if r.eng == nil {
		return ""
	}
	return r.eng.Current()
}

// Run executes the remaining steps of cp, then clears the checkpoint and records the
// last operation.
func (r *Runner) Run(ctx context.Context, cp *checkpoint.Checkpoint) (*checkpoint.LastOperation, error) {
	w := &steps.World{
		Kube: r.Kube, Nodetool: r.Nodetool, Spec: r.Spec, Namespace: cp.Namespace,
		ClusterSelector: r.ClusterSelector, Racks: r.Racks, CountWords: r.CountWords, ResourceKind: r.ResourceKind, Container: r.Container, CP: cp,
		Reporter: r.Reporter, Poll: r.Poll, StallAfter: r.StallAfter, ServerVersion: r.ServerVersion, Now: r.Now,
		Operator: r.Operator, Deleting: r.Deleting, SampleEvery: r.SampleEvery,
	}
	impl, err := BuildSteps(r.Kind, w)
	if err != nil {
		return nil, err
	}
	r.eng = &engine.Engine{CP: cp, Steps: impl, Store: r.Store, Reporter: r.Reporter, Now: r.Now, Poll: r.Poll, StepTimeout: r.StepTimeout, MaxAttempts: 10, Lease: r.Lease, Transient: kube.Transient, Forget: w.Forget}
	w.Amend = r.eng.Amend
	w.NoteProgress = r.eng.NoteProgress
	// The paused operator is followed by one watch for the whole run (operatorguard.go).
	if guard := steps.NewOperatorGuard(ctx, w); guard != nil {
		defer guard.Stop()
		r.eng.Guard = guard.Check
	}
	if err := r.eng.Run(ctx); err != nil {
		var lost *engine.Fatal
		if !(errors.As(err, &lost) && errors.Is(err, checkpoint.ErrLost)) {
			if rerr := r.eng.Release(ctx); rerr != nil {
				r.Reporter.Warn("", "could not mark the checkpoint as released: "+rerr.Error())
			}
		}
		return nil, err
	}
	now := time.Now().UTC()
	if r.Now != nil {
		now = r.Now().UTC()
	}
	last := checkpoint.LastOperation{
		OperationID: cp.OperationID, Kind: cp.Kind, Result: "succeeded",
		Summary:   r.Kind.Summary(cp),
		StartedBy: cp.StartedBy, StartedAt: cp.StartedAt, FinishedAt: now,
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := r.Store.Finish(fctx, cp, last); err != nil {
		return nil, fmt.Errorf("every step is done but the checkpoint could not be cleared: %w", err)
	}
	return &last, nil
}
