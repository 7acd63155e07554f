package repair

import (
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

const example = `  # Find CassKop stuck after an interrupted decommission, verify, show the plan, repair
  kubectl cassandra repair-operator-state -n cassandra cassandra-demo

  # Only show what is stuck and the plan
  kubectl cassandra repair-operator-state cassandra-demo --dry-run -o json`

// Command implements operation.Commander: kubectl cassandra repair-operator-state. It is not
// refused while CassKop is busy: a stuck CassKop looks busy for good.
func (Kind) Command() operation.Command {
	return operation.Command{
		Use:   "repair-operator-state [CLUSTER]",
		Short: "Un-stick CassKop after an interrupted decommission (verified, planned, resumable)",
		Long: `Find the states in which CassKop stays stuck after an interrupted decommission, in the
CassandraCluster's status, and repair them:

  - podLastOperation decommission Ongoing while its pod is gone (CassKop #370): once its node is
    confirmed out of the ring and no pod uses its PVCs, delete the leftover PVCs;
  - Finalizing while the StatefulSet was never shrunk: once the node is confirmed DECOMMISSIONED
    and out of the ring, shrink the StatefulSet, wait for the pod to go, delete its PVCs;
  - ToDo although the decommission was fired (node LEAVING or DECOMMISSIONED): wait until the
    node left, then the same;

then set the rack's status so that CassKop continues: podLastOperation Done (podsOK [pod]) and
cassandraLastAction Done. The status is written through the /status subresource when the CRD has
one (CassKop 2.3+), else with a merge patch of the CassandraCluster (the 2022 CRD has none).

Everything is verified against the cluster before the plan is shown, and again right before each
step. The operator is paused meanwhile (it would write its own status over the repair) and
restored at the end. An interrupted repair is finished with "kubectl cassandra resume".`,
		Example: example,
		DryRun:  "Print what is stuck and the plan, and change nothing", During: "the repair",
		InFlight: func(existing *record.Checkpoint, _ operation.Asked) operation.InFlight {
			if existing.Kind == Name {
				return operation.InFlight{Resume: true, Say: fmt.Sprintf("Repair %s is in flight; resuming it.", existing.OperationID)}
			}
			return operation.InFlight{}
		},
		Next: func(ns, cluster string, _ *operation.Plan, _ operation.Request) string {
			return fmt.Sprintf("kubectl cassandra repair-operator-state -n %s %s --yes", ns, cluster)
		},
	}
}
