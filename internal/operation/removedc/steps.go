package removedc

import (
	"context"
	"fmt"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/dcread"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// remove-dc's own step kinds; the nodes' removal is the step library's.
const (
	// StepAlterKeyspaces drops the datacenter from the replication of every keyspace
	// that has it (the record's Keyspaces name them as planned).
	StepAlterKeyspaces = "alter-keyspaces"
	// StepWaitSchema waits until every node of the datacenters that stay agrees on
	// the schema, and verifies no keyspace replicates to the datacenter.
	StepWaitSchema = "wait-schema-agreement"
	// StepRemoveDC takes the datacenter out of the cluster resource.
	StepRemoveDC = "remove-datacenter"
	// StepAlterAuth drops the datacenter from system_auth once no node of it is left
	// in the ring (Cassandra 5.0 refuses it before: keyspaces.go authDeferred).
	StepAlterAuth = "alter-system-auth"
	// StepWaitRemoved waits until the operator removed what it kept of the
	// datacenter, and verifies no node of it is left in the ring.
	StepWaitRemoved = "wait-datacenter-removed"
)

// nodeKinds are a removed node's steps: as a scale-down's (its decommission streams
// nothing: no keyspace replicates to the datacenter any more).
var nodeKinds = []string{record.StepDecommission, record.StepVerifyLeft, record.StepShrinkSTS, record.StepWaitPodGone, record.StepDeletePVCs}

// removalSteps lists the steps: the keyspaces' changes and the schema agreement, then
// (the operator paused when pause) every node's removal and the resource's count
// (when counted: the datacenter still counts nodes), then system_auth's change when
// authLast (5.0), then, the operator running, the datacenter out of the resource and
// the wait until the operator removed it.
func removalSteps(alter, authLast bool, nodes []record.Node, pause, counted bool) []record.Step {
	var list []record.Step
	if alter {
		list = append(list, checkpoint.PendingStep(StepAlterKeyspaces, ""))
	}
	list = append(list, checkpoint.PendingStep(StepWaitSchema, ""))
	if counted {
		var removal []record.Step
		for _, n := range nodes {
			removal = append(removal, checkpoint.NodeSteps([]record.Node{n}, nodeKinds...)...)
		}
		removal = append(removal, checkpoint.PendingStep(steps.StepUpdateCluster, ""))
		list = append(list, checkpoint.Paused(pause, removal)...)
	}
	if authLast {
		list = append(list, checkpoint.PendingStep(StepAlterAuth, ""))
	}
	return append(list, checkpoint.PendingStep(StepRemoveDC, ""), checkpoint.PendingStep(StepWaitRemoved, ""))
}

// BuildSteps implements operation.Kind: its own steps, and the library's for the
// nodes, the count and the operator's pause (the ring read outside the plan).
func (Kind) BuildSteps(kw pub.World) (map[string]pub.Step, error) {
	w, e, err := dcread.Open(kw, extOf)
	if err != nil {
		return nil, err
	}
	planned := map[string]bool{}
	for _, n := range w.CP.Nodes {
		planned[n.Pod] = true
	}
	r := &run{w: w, dc: w.CP.Target.DC, m: dcread.Named(w, e.Readers, e.CQLSecret, dcread.Member(w.Racks, planned)),
		authLast: hasKind(w.CP, StepAlterAuth)}
	variant := steps.Variant{RingReaders: true}
	if r.authLast {
		variant.Force = &steps.ForceRule{
			When: "if the replication check would refuse it for system_auth alone (kept until " + r.dc + "'s nodes left)",
			Now:  r.forceNow}
	}
	removed := removalRequested(w, r.dc)
	return steps.BuildKind(w, variant, func(s record.Step) (pub.Step, error) {
		switch s.Kind {
		case StepWaitLeft:
			n, ok := w.CP.Node(s.Pod)
			if !ok {
				return nil, fmt.Errorf("step %s names pod %s, which is not in the plan", s.ID, s.Pod)
			}
			return &waitLeft{run: r, n: n}, nil
		case StepAlterKeyspaces:
			return &alterKeyspaces{r}, nil
		case StepAlterAuth:
			return &alterAuth{r}, nil
		case StepWaitSchema:
			return &waitSchema{r}, nil
		case StepRemoveDC, StepWaitRemoved:
			if w.Datacenters == nil {
				return nil, fmt.Errorf("operation %s removes a datacenter, which this operator's adapter cannot do", w.CP.OperationID)
			}
			if s.Kind == StepRemoveDC {
				return &removeDC{r}, nil
			}
			if r.driven() {
				return &waitRemovedDriven{waitRemoved{r}}, nil
			}
			return &waitRemoved{r}, nil
		}
		// Once the removal is requested, the library's steps before it are done
		// (removedStep): what they read is gone.
		if !removed {
			return nil, nil
		}
		lib, err := steps.BuildOne(w, variant, s)
		if err != nil {
			return nil, err
		}
		desc := ""
		if d, ok := lib.(pub.Describer); ok {
			desc = d.Describe()
		}
		return removedStep{desc: desc}, nil
	})
}

// removedStep is a step before the datacenter's removal from the resource, once that
// removal is requested: remove-datacenter verified no node of it was left, and the
// operator then deleted what the step reads (a StatefulSet, the datacenter's count).
type removedStep struct{ desc string }

func (s removedStep) Describe() string                 { return s.desc }
func (removedStep) Done(context.Context) (bool, error) { return true, nil }
func (removedStep) Safe(context.Context) error         { return nil }
func (removedStep) Do(context.Context) error           { return nil }

// removalRequested reads whether the resource still asks for the datacenter; a failed
// read is "not yet" (the steps then read the world themselves).
func removalRequested(w *steps.World, dc string) bool {
	if w.Datacenters == nil || w.CP.Target.DC == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	removed, err := w.Datacenters.RemovalRequested(ctx, w.CP.Namespace, w.CP.Cluster, dc)
	return err == nil && removed
}
