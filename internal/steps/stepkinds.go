package steps

// The step kinds of the library, as checkpoints record them: each is the kind() of one
// step type here, and the operation kinds list theirs (internal/operation/*/steps.go).
// Those an operator's own kind may plan are published in pkg/record, so that a plugin
// names them without this package.
const (
	StepUpdateCluster = "update-cluster"
	// StepRemoveNode takes the place of StepDecommission for a node that is dead (scale
	// --remove-dead): `nodetool removenode <Host ID>` on a live node, its ranges
	// re-streamed from the surviving replicas (removenode.go).
	StepRemoveNode = "removenode"
)
