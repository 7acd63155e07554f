package repair

import (
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
)

// Command implements operation.Commander: kubectl cassandra repair-operator-state on a
// CassandraDatacenter (the command CassKop's repair shares). It is not refused while
// the operator is busy: a stuck operator looks busy for good.
func (Kind) Command() operation.Command {
	return operation.Command{
		Use:   "repair-operator-state [CLUSTER]",
		Short: "Un-stick the operator after an interrupted decommission (verified, planned, resumable)",
		Long: `On a CassandraDatacenter, find the states in which cass-operator stays stuck after it was
interrupted during a scale-down, and repair them so that it moves on by itself:

  - a node that left the ring while the operator was down, whose pod was never labelled
    Decommissioning (the operator waits on the pod for ever): once the node is confirmed out of
    the ring and DECOMMISSIONED, label the pod node-state=Decommissioning, then set the
    datacenter's condition ScalingDown to True; the operator then shrinks the StatefulSet and
    deletes the pod's PVC and status entry itself;
  - a removed pod's server-data PVC left over, with its status.nodeStatuses entry (a later
    scale-up would crash-loop on it): once no pod of that name exists, its StatefulSet does not
    want it and its node is absent from the ring, delete the PVC (UID precondition) and remove
    the entry (a JSON patch on /status that tests it);
  - a pod labelled Decommissioning whose node is UN and kept by the datacenter's size: label it
    Started again.

Nothing is deleted for a node still in the ring. cass-operator is never paused. A scale that
stopped on one of these states is carried on by the repair: its plan ends with what was left of
the scale, under the same operation ID.`,
		Example: `  # Find what cass-operator is stuck on, verify, show the plan, repair
  kubectl cassandra repair-operator-state -n cassandra dc1 --dry-run`,
		DryRun: "Print what is stuck and the plan, and change nothing", During: "the repair",
		InFlight: func(existing *record.Checkpoint, _ operation.Asked) operation.InFlight {
			switch {
			case existing.Kind == Name:
				return operation.InFlight{Resume: true, Say: fmt.Sprintf("Repair %s is in flight; resuming it.", existing.OperationID)}
			case existing.Operator == cassoperator.Plugin{}.Name():
				// A scale that met the stuck state: repaired first, then carried on.
				return operation.InFlight{Absorb: true}
			}
			return operation.InFlight{}
		},
		Next: func(ns, cluster string, _ *operation.Plan, _ operation.Request) string {
			return fmt.Sprintf("kubectl cassandra repair-operator-state -n %s %s --yes", ns, cluster)
		},
	}
}
