package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
)

// planReport is the JSON/YAML form of a plan (stable schema; "next" names the command
// to run next).
type planReport struct {
	Kind        string             `json:"kind"`
	OperationID string             `json:"operationID,omitempty"`
	Namespace   string             `json:"namespace"`
	Cluster     string             `json:"cluster"`
	DC          string             `json:"dc"`
	Racks       []string           `json:"racks"`
	From        map[string]int     `json:"from"`
	To          int                `json:"to"`
	Force       bool               `json:"force"`
	DryRun      bool               `json:"dryRun"`
	Nodes       []planNode         `json:"nodes"`
	Steps       []planStep         `json:"steps"`
	Warnings    []string           `json:"warnings,omitempty"`
	Findings    []string           `json:"findings,omitempty"`
	StartedBy   *checkpoint.Holder `json:"startedBy,omitempty"`
	Next        string             `json:"next"`
}

type planNode struct {
	Pod     string   `json:"pod"`
	Ordinal int      `json:"ordinal"`
	Rack    string   `json:"rack"`
	HostID  string   `json:"hostID"`
	Address string   `json:"address,omitempty"`
	PVCs    []string `json:"pvcs"`
}

type planStep struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Pod         string `json:"pod,omitempty"`
	State       string `json:"state"`
	Attempts    int    `json:"attempts"`
	Description string `json:"description"`
}

func newPlanReport(cp *checkpoint.Checkpoint, warnings []string, dryRun bool, next string) planReport {
	r := planReport{
		Kind: cp.Kind, OperationID: cp.OperationID, Namespace: cp.Namespace, Cluster: cp.Cluster,
		DC: cp.Target.DC, Racks: cp.Target.Racks, From: cp.Target.From, To: cp.Target.Nodes,
		Force: cp.Force, DryRun: dryRun, Warnings: warnings, Next: next,
		Nodes: []planNode{}, Steps: []planStep{},
	}
	if dryRun {
		r.OperationID = ""
	}
	for _, n := range cp.Nodes {
		pn := planNode{Pod: n.Pod, Ordinal: n.Ordinal, Rack: n.Rack, HostID: n.HostID, Address: n.Address, PVCs: []string{}}
		for _, p := range n.PVCs {
			pn.PVCs = append(pn.PVCs, p.Name)
		}
		r.Nodes = append(r.Nodes, pn)
	}
	for _, s := range cp.Steps {
		r.Steps = append(r.Steps, planStep{ID: s.ID, Kind: s.Kind, Pod: s.Pod, State: s.State, Attempts: s.Attempts, Description: stepDescription(cp, s)})
	}
	return r
}

// stepDescription says in words what a step does.
func stepDescription(cp *checkpoint.Checkpoint, s checkpoint.Step) string {
	n, _ := cp.Node(s.Pod)
	switch s.Kind {
	case checkpoint.StepDecommission:
		force := ""
		if cp.Force {
			force = " --force"
		}
		if cp.Kind == checkpoint.KindRepairOperator {
			return fmt.Sprintf("nodetool decommission%s on %s (Host ID %s), only if it is NORMAL again (it was already fired)", force, n.Pod, n.HostID)
		}
		return fmt.Sprintf("nodetool decommission%s on %s (Host ID %s)", force, n.Pod, n.HostID)
	case checkpoint.StepVerifyLeft:
		return fmt.Sprintf("verify %s is DECOMMISSIONED and gone from the ring", n.Pod)
	case checkpoint.StepShrinkSTS:
		return fmt.Sprintf("shrink StatefulSet %s to %d replicas", n.StatefulSet, n.Ordinal)
	case checkpoint.StepWaitPodGone:
		return fmt.Sprintf("wait until pod %s is gone", n.Pod)
	case checkpoint.StepDeletePVCs:
		var names []string
		for _, p := range n.PVCs {
			names = append(names, p.Name)
		}
		if len(names) == 0 {
			return "no PVC to delete for " + n.Pod
		}
		return "delete PVC " + strings.Join(names, ", ")
	case checkpoint.StepPauseOperator:
		op := cp.PausedOperator
		return fmt.Sprintf("pause operator Deployment %s/%s: scale %d -> 0 and wait for its pods to go", op.Namespace, op.Name, op.Replicas)
	case checkpoint.StepResumeOperator:
		op := cp.PausedOperator
		if cp.Kind == checkpoint.KindRepairOperator {
			return fmt.Sprintf("restore operator Deployment %s/%s to %d replicas (it continues from the repaired status)", op.Namespace, op.Name, op.Replicas)
		}
		return fmt.Sprintf("restore operator Deployment %s/%s to %d replicas (the cluster resource and the StatefulSets agree)", op.Namespace, op.Name, op.Replicas)
	case checkpoint.StepUpdateCluster:
		return fmt.Sprintf("set nodesPerRacks of datacenter %s to %d in CassandraCluster %s", cp.Target.DC, cp.Target.Nodes, cp.Cluster)
	}
	return kindStepDescription(cp, s)
}

// showPlan writes the plan to be confirmed: on stdout when it is the command's output
// (-o text), else on stderr beside the progress, so stdout stays machine-readable.
func (o *Options) showPlan(r planReport, format string) {
	w := o.ErrOut
	if format == "text" {
		w = o.Out
	}
	o.printPlanText(w, r, "Plan")
}

// printPlanText writes the plan for people.
func (o *Options) printPlanText(w io.Writer, r planReport, title string) {
	fmt.Fprintf(w, "%s: CassandraCluster %s/%s, datacenter %s\n", title, r.Namespace, r.Cluster, r.DC)
	if r.Kind == checkpoint.KindRestart || r.Kind == checkpoint.KindRepairOperator {
		printKindHeader(w, r)
	}
	for _, rack := range r.Racks {
		if r.Kind == checkpoint.KindRestart || r.Kind == checkpoint.KindRepairOperator {
			break
		}
		fmt.Fprintf(w, "  rack %s: %d -> %d nodes\n", rack, r.From[rack], r.To)
	}
	if r.Force {
		fmt.Fprintln(w, "  --force: Cassandra's replication-factor check is skipped")
	}
	fmt.Fprintln(w, stepsHeader(r.Kind))
	for i, s := range r.Steps {
		mark := "   "
		switch s.State {
		case checkpoint.StateDone:
			mark = "[x]"
		case checkpoint.StateStarted:
			mark = "[~]"
		}
		fmt.Fprintf(w, "  %s %2d. %s\n", mark, i+1, s.Description)
	}
	for _, wmsg := range r.Warnings {
		fmt.Fprintf(w, "  [!!] %s\n", wmsg)
	}
}
