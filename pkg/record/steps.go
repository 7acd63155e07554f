package record

// The step kinds of the plugin's step library (internal/steps implements them) that an
// operator's own kind plans and lists in its Schema, or that a checkpoint's fields
// refer to. A kind's checkpoint records them by these names: they never change.
const (
	// StepDecommission, StepVerifyLeft, StepShrinkSTS, StepWaitPodGone and
	// StepDeletePVCs remove one node, in this order (a scale-down).
	StepDecommission = "decommission"
	StepVerifyLeft   = "verify-left"
	StepShrinkSTS    = "shrink-statefulset"
	StepWaitPodGone  = "wait-pod-gone"
	StepDeletePVCs   = "delete-pvcs"
	// StepWaitJoined waits until a new pod is Ready and its node UN (a scale-up).
	StepWaitJoined = "wait-joined"
	// StepPauseOperator scales the operator's Deployment to 0 before anything else, and
	// StepResumeOperator restores its recorded replicas; the checkpoint's PausedOperator
	// must be set.
	StepPauseOperator  = "pause-operator"
	StepResumeOperator = "resume-operator"
)

// The step kinds of a scale an operator drives itself (operator.Scaler; their
// implementation is internal/steps/driven.go).
const (
	StepRequestRemoval = "request-removal"
	StepWaitLeaving    = "wait-leaving"
	StepWaitClaimsGone = "wait-pvcs-gone"
	StepWaitReleased   = "wait-operator-released"
	StepRequestGrowth  = "request-growth"
)

// DrivenSteps lists the step kinds of a driven scale, for the schema of a kind that
// carries such a scale on (cass-operator's repair).
func DrivenSteps() []string {
	return []string{StepRequestRemoval, StepWaitLeaving, StepWaitClaimsGone, StepWaitReleased, StepRequestGrowth}
}

// The stream throughput steps (--stream-throughput; internal/steps/throughput.go): the
// checkpoint's Throughput must be set.
const (
	StepRecordThroughput  = "record-throughput"
	StepSetThroughput     = "set-throughput"
	StepRestoreThroughput = "restore-throughput"
)

// ThroughputSteps lists the stream throughput step kinds, for the schema of a kind that
// carries them on (cass-operator's repair).
func ThroughputSteps() []string {
	return []string{StepRecordThroughput, StepSetThroughput, StepRestoreThroughput}
}

// The steps of an operator's task (a CassandraTask: internal/steps/tasks.go).
const (
	StepCreateTask   = "create-task"
	StepWaitCleaned  = "wait-cleaned"
	StepWaitTaskDone = "wait-task-done"
)

// TaskSteps lists the task step kinds, for the schema of a kind that carries them on
// (cass-operator's repair, carrying a scale-up with --cleanup).
func TaskSteps() []string {
	return []string{StepCreateTask, StepWaitCleaned, StepWaitTaskDone}
}
