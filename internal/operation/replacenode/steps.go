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
	// StepDeleteClaims and StepDeletePod discard the dead node's data and pod (UID
	// preconditions), once it is still dead right then.
	StepDeleteClaims = "delete-dead-claims"
	StepDeletePod    = "delete-dead-pod"
	// StepCreateTask asks the operator (its replacenode task), StepWaitTask waits until
	// the task completed.
	StepCreateTask = "create-replace-task"
	StepWaitTask   = "wait-replace-task"
	// StepWaitReplaced waits until the replacement is verified in the ring.
	StepWaitReplaced = "wait-replaced"
)

// stepKinds are every step kind a replace-node checkpoint may hold.
var stepKinds = []string{StepSetOption, StepDeleteClaims, StepDeletePod, StepWaitReplaced, StepRemoveOption,
	StepCreateTask, StepWaitTask, record.StepPauseOperator, record.StepResumeOperator, record.StepRecordThroughput, record.StepSetThroughput, record.StepRestoreThroughput,
}

// Steps lists a replace's steps. Through a task: create it, verify the replacement,
// wait until the task completed. Through the start script (the operator paused when
// pause): write the option, delete the claims then the pod, verify the replacement,
// take the option out. --stream-throughput adds its steps around them (throttled).
func Steps(rep *record.Replacement, pause bool) []record.Step {
	p := rep.Pod
	if rep.Task != "" {
		return []record.Step{checkpoint.PendingStep(StepCreateTask, p), checkpoint.PendingStep(StepWaitReplaced, p), checkpoint.PendingStep(StepWaitTask, p)}
	}
	return checkpoint.Paused(pause, []record.Step{checkpoint.PendingStep(StepSetOption, p), checkpoint.PendingStep(StepDeleteClaims, p),
		checkpoint.PendingStep(StepDeletePod, p), checkpoint.PendingStep(StepWaitReplaced, p), checkpoint.PendingStep(StepRemoveOption, p)})
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
	out := map[string]pub.Step{}
	for _, s := range cp.Steps {
		var st pub.Step
		switch s.Kind {
		case StepSetOption:
			st = &setOption{r}
		case StepRemoveOption:
			st = &removeOption{r}
		case StepDeleteClaims:
			st = &deleteClaims{r}
		case StepDeletePod:
			st = &deletePod{r}
		case StepWaitReplaced:
			st = &waitReplaced{run: r}
		case StepCreateTask:
			st = &createTask{r}
		case StepWaitTask:
			st = &waitTask{r}
		default:
			lib, err := steps.BuildOne(w, steps.Variant{}, s)
			if err != nil {
				return nil, err
			}
			st = lib
		}
		out[s.ID] = st
	}
	return out, nil
}

// run is what the steps of one replace share: the world, the dead node's record and
// its planned node.
type run struct {
	w   *steps.World
	rep *record.Replacement
	n   record.Node
}
