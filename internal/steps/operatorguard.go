package steps

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// OperatorGuard checks, right before every action while the plan holds the operator
// paused (its pause done, its restore not started), that the operator Deployment is
// still at 0 replicas: someone scaling it back up would have it fight the change. It
// follows the Deployment with one watch opened when the run starts (one request per
// run, not one per action); Check drains the watch's events without blocking and
// decides from the latest. Until an event was seen (or after the watch closed, until it
// is reopened) the state is unknown and Check reads the Deployment.
type OperatorGuard struct {
	w  *World
	op record.PausedOperator

	mu       sync.Mutex
	watch    watch.Interface
	known    bool
	replicas int32
}

// NewOperatorGuard opens the watch for a plan that pauses an operator; nil when the plan
// pauses none. A watch that cannot be opened is not an error: Check reads instead.
func NewOperatorGuard(ctx context.Context, w *World) *OperatorGuard {
	if w.CP == nil || w.CP.PausedOperator == nil {
		return nil
	}
	g := &OperatorGuard{w: w, op: *w.CP.PausedOperator}
	g.open(ctx)
	return g
}

func (g *OperatorGuard) open(ctx context.Context) {
	wa, err := g.w.Kube.AppsV1().Deployments(g.op.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", g.op.Name).String(),
	})
	if err == nil {
		g.watch = wa
	}
}

// Stop ends the watch.
func (g *OperatorGuard) Stop() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.watch != nil {
		g.watch.Stop()
		g.watch = nil
	}
}

// Check is the engine's Guard: an error (exit 3) when step id would act while the
// operator the plan holds paused runs again.
func (g *OperatorGuard) Check(ctx context.Context, id string) error {
	if g == nil || !g.holds(id) {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.drain(ctx)
	// A watch's events lag the API server: the latest one delivered may still be the
	// state before our own pause (the watch opens before it). So a running operator seen
	// through the watch is confirmed by a read before the run stops; "paused" is taken
	// from the watch as it is (a later scale-up arrives as a later event).
	if !g.known || g.replicas != 0 {
		d, err := g.w.Kube.AppsV1().Deployments(g.op.Namespace).Get(ctx, g.op.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil // nothing left to fight the change
		case err != nil:
			return &operation.Fatal{Code: exit.Interrupted, Err: fmt.Errorf("cannot read operator Deployment %s/%s before %s (it must still be paused): %w; nothing was done by this step. Run `kubectl cassandra resume -n %s %s` to continue",
				g.op.Namespace, g.op.Name, id, err, g.w.CP.Namespace, g.w.CP.Cluster)}
		}
		g.replicas = deploymentReplicas(d)
		g.known = g.watch != nil // a GET is good for this check only without a watch
	}
	if g.replicas == 0 {
		return nil
	}
	return &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("operator Deployment %s/%s was scaled to %d replicas by someone while this operation held it paused; it would fight the change. "+
		"Nothing was done by %s. Run `kubectl cassandra resume -n %s %s` to pause it again and continue, or `kubectl cassandra abort -n %s %s`",
		g.op.Namespace, g.op.Name, g.replicas, id, g.w.CP.Namespace, g.w.CP.Cluster, g.w.CP.Namespace, g.w.CP.Cluster)}
}

// holds: the pause is done and the restore not started, and id is neither.
func (g *OperatorGuard) holds(id string) bool {
	var paused, restoring bool
	for _, s := range g.w.CP.Steps {
		switch s.Kind {
		case record.StepPauseOperator:
			paused = s.State == record.StateDone
			if s.ID == id {
				return false
			}
		case record.StepResumeOperator:
			restoring = s.State != record.StatePending
			if s.ID == id {
				return false
			}
		}
	}
	return paused && !restoring
}

// drain takes every event the watch has delivered, without waiting; the latest
// decides. A closed watch is reopened, and the state is unknown until it delivers.
func (g *OperatorGuard) drain(ctx context.Context) {
	for g.watch != nil {
		select {
		case ev, ok := <-g.watch.ResultChan():
			if !ok {
				g.watch, g.known = nil, false
				g.open(ctx)
				if g.watch == nil {
					return
				}
				continue
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				if d, ok := ev.Object.(*appsv1.Deployment); ok && d.Name == g.op.Name {
					g.replicas, g.known = deploymentReplicas(d), true
				}
			case watch.Deleted:
				g.replicas, g.known = 0, true
			default: // an error or bookmark: ask the API server
				g.known = false
			}
		default:
			return
		}
	}
	g.known = false
}

func deploymentReplicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}
