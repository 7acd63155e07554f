package removedc

import (
	"context"
	"fmt"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
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
	w, err := steps.Of(kw)
	if err != nil {
		return nil, err
	}
	// A driven removal deletes the datacenter's resource: there is no status of it left
	// for the run to wait to settle.
	w.Settler = nil
	e, err := extOf(w.CP)
	if err != nil {
		return nil, err
	}
	planned := map[string]bool{}
	for _, n := range w.CP.Nodes {
		planned[n.Pod] = true
	}
	named := map[string]bool{}
	for _, p := range e.Readers {
		named[p] = true
	}
	r := &run{w: w, dc: w.CP.Target.DC, m: dcread.Readers{Kube: w.Kube, Nodetool: w.Nodetool, NS: w.CP.Namespace, Named: named,
		Exclude: dcread.Member(w.Racks, planned), CQL: cql.Client{Exec: w.Exec, Auth: cql.SecretAuth(w.Kube, w.CP.Namespace, e.CQLSecret)}},
		authLast: hasKind(w.CP, StepAlterAuth)}
	variant := steps.Variant{RingReaders: true}
	if r.authLast {
		variant.Force = &steps.ForceRule{
			When: "if the replication check would refuse it for system_auth alone (kept until " + r.dc + "'s nodes left)",
			Now:  r.forceNow}
	}
	removed := removalRequested(w, r.dc)
	out := map[string]pub.Step{}
	for _, s := range w.CP.Steps {
		var st pub.Step
		switch s.Kind {
		case StepWaitLeft:
			n, ok := w.CP.Node(s.Pod)
			if !ok {
				return nil, fmt.Errorf("step %s names pod %s, which is not in the plan", s.ID, s.Pod)
			}
			st = &waitLeft{run: r, n: n}
		case StepAlterKeyspaces:
			st = &alterKeyspaces{r}
		case StepAlterAuth:
			st = &alterAuth{r}
		case StepWaitSchema:
			st = &waitSchema{r}
		case StepRemoveDC:
			if w.Datacenters == nil {
				return nil, fmt.Errorf("operation %s removes a datacenter, which this operator's adapter cannot do", w.CP.OperationID)
			}
			st = &removeDC{r}
		case StepWaitRemoved:
			if w.Datacenters == nil {
				return nil, fmt.Errorf("operation %s removes a datacenter, which this operator's adapter cannot do", w.CP.OperationID)
			}
			st = &waitRemoved{r}
			if r.driven() {
				st = &waitRemovedDriven{waitRemoved{r}}
			}
		default:
			lib, err := steps.BuildOne(w, variant, s)
			if err != nil {
				return nil, err
			}
			st = lib
			if removed {
				desc := ""
				if d, ok := lib.(pub.Describer); ok {
					desc = d.Describe()
				}
				st = removedStep{desc: desc}
			}
		}
		out[s.ID] = st
	}
	return out, nil
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
