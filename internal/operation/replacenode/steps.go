package replacenode

import (
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// The step kinds of a replace-node, as its checkpoints record them.
const (
	// StepSetOption writes the replace option into the start script (StartScript
	// operators), StepRemoveOption takes it out once the replacement is verified.
	StepSetOption    = "set-replace-option"
	StepRemoveOption = "remove-replace-option"
	// StepDeleteClaims and StepDeleteDeadPod discard the dead node's data and pod (UID
	// preconditions), once it is still dead right then.
	StepDeleteClaims  = "delete-dead-claims"
	StepDeleteDeadPod = "delete-dead-pod"
	// StepCreateReplaceTask asks the operator (its replacenode task), StepWaitTask
	// waits until the task completed.
	StepCreateReplaceTask = "create-replace-task"
	StepWaitTask          = "wait-replace-task"
	// StepWaitReplaced waits until the replacement is verified in the ring.
	StepWaitReplaced = "wait-replaced"
)

// stepKinds are every step kind a replace-node checkpoint may hold.
var stepKinds = []string{StepSetOption, StepDeleteClaims, StepDeleteDeadPod, StepWaitReplaced, StepRemoveOption,
	StepCreateReplaceTask, StepWaitTask, record.StepPauseOperator, record.StepResumeOperator, record.StepRecordThroughput, record.StepSetThroughput, record.StepRestoreThroughput,
}

// Steps lists a replace's steps. Through a task: create it, verify the replacement,
// wait until the task completed. Through the start script (the operator paused when
// pause): write the option, delete the claims then the pod, verify the replacement,
// take the option out. --stream-throughput adds its steps around them (throttled).
func Steps(rep *record.Replacement, pause bool) []record.Step {
	p := rep.Pod
	if rep.Task != "" {
		return []record.Step{checkpoint.PendingStep(StepCreateReplaceTask, p), checkpoint.PendingStep(StepWaitReplaced, p), checkpoint.PendingStep(StepWaitTask, p)}
	}
	return checkpoint.Paused(pause, []record.Step{checkpoint.PendingStep(StepSetOption, p), checkpoint.PendingStep(StepDeleteClaims, p),
		checkpoint.PendingStep(StepDeleteDeadPod, p), checkpoint.PendingStep(StepWaitReplaced, p), checkpoint.PendingStep(StepRemoveOption, p)})
}

// BuildSteps implements operation.Kind: the kind's own steps, and the library's pause
// and restore of the operator and record, set and restore of the sources' stream
// throughput (--stream-throughput).
func (Kind) BuildSteps(kw pub.World) (map[string]pub.Step, error) {
	w, err := steps.Of(kw)
	if err != nil {
		return nil, err
	}
	cp := w.CP
	if cp.Replace == nil || len(cp.Nodes) != 1 || cp.Nodes[0].Pod != cp.Replace.Pod {
		return nil, fmt.Errorf("operation %s is a replace-node whose checkpoint has no replace record for its one node: it cannot be run; abort it", cp.OperationID)
	}
	r := &run{w: w, rep: cp.Replace, n: cp.Nodes[0]}
	return steps.BuildKind(w, steps.Variant{}, func(s record.Step) (pub.Step, error) {
		switch s.Kind {
		case StepSetOption:
			return &setOption{r}, nil
		case StepRemoveOption:
			return &removeOption{r}, nil
		case StepDeleteClaims:
			return &deleteClaims{r}, nil
		case StepDeleteDeadPod:
			return &deletePod{r}, nil
		case StepWaitReplaced:
			return &waitReplaced{run: r}, nil
		case StepCreateReplaceTask:
			return &createTask{r}, nil
		case StepWaitTask:
			return &waitTask{r}, nil
		}
		return nil, nil
	})
}

// run is what the steps of one replace share: the world, the dead node's record and
// its planned node.
type run struct {
	w   *steps.World
	rep *record.Replacement
	n   record.Node
	// seen times the pods re-created since the plan that may be starting (starting.go).
	seen firstSeen
}
