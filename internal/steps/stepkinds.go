package steps

import "github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"

// The step kinds of the library, as checkpoints record them: each is the kind() of one
// step type here, and the operation kinds list theirs (internal/operation/*/steps.go).
// Those an operator's own kind may plan are published in pkg/record, so that a plugin
// names them without this package.
const (
	// StepDecommission, StepVerifyLeft, StepShrinkSTS, StepWaitPodGone and
	// StepDeletePVCs remove one node, in this order (a scale-down); StepUpdateCluster
	// writes the cluster resource's new count once every rack has it.
	StepDecommission  = record.StepDecommission
	StepVerifyLeft    = record.StepVerifyLeft
	StepShrinkSTS     = record.StepShrinkSTS
	StepWaitPodGone   = record.StepWaitPodGone
	StepDeletePVCs    = record.StepDeletePVCs
	StepUpdateCluster = "update-cluster"
	// StepRemoveNode takes the place of StepDecommission for a node that is dead (scale
	// --remove-dead): `nodetool removenode <Host ID>` on a live node, its ranges
	// re-streamed from the surviving replicas (removenode.go).
	StepRemoveNode = "removenode"
	// StepDeleteLeftoverPVCs deletes the claims a removal whose record is gone left
	// behind (leftover.go).
	StepDeleteLeftoverPVCs = record.StepDeleteLeftoverPVCs
	// StepPauseOperator scales the operator's Deployment to 0 before anything else, and
	// StepResumeOperator restores its recorded replicas after the cluster resource and the
	// StatefulSets agree.
	StepPauseOperator  = record.StepPauseOperator
	StepResumeOperator = record.StepResumeOperator
	// StepGrowSTS grows the rack's StatefulSet by one replica (scale-up).
	StepGrowSTS = "grow-statefulset"
	// StepWaitJoined waits until the new pod is Ready and its node UN (scale-up).
	StepWaitJoined = record.StepWaitJoined
	// StepCleanup runs nodetool cleanup on a pre-existing node (scale-up --cleanup). Its
	// effect cannot be observed: it is done only once recorded done.
	StepCleanup = "cleanup"
	// StepDrain, StepDeletePod and StepWaitRestarted restart one pod (restart).
	StepDrain         = "drain"
	StepDeletePod     = "delete-pod"
	StepWaitRestarted = "wait-restarted"
)
