package cli

import (
	"fmt"
	"io"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
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

	kind pub.Kind
	cp   *checkpoint.Checkpoint
	// resource is the cluster resource's kind (operator.Resource.Kind).
	resource string
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

func newPlanReport(k pub.Kind, w *steps.World, warnings []string, dryRun bool, next string) planReport {
	cp := w.CP
	r := planReport{
		Kind: cp.Kind, OperationID: cp.OperationID, Namespace: cp.Namespace, Cluster: cp.Cluster,
		DC: cp.Target.DC, Racks: cp.Target.Racks, From: cp.Target.From, To: cp.Target.Nodes,
		Force: cp.Force, DryRun: dryRun, Warnings: warnings, Next: next,
		Nodes: []planNode{}, Steps: []planStep{}, kind: k, cp: cp, resource: w.ResourceKind,
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
	// The step types say what they do (steps.PlanTexter, else engine.Describer): the
	// kind builds them as a run would, on the world a run starts from
	// (session.stepWorld); describing a step reads nothing.
	impl, _ := operation.BuildSteps(k, w)
	for _, s := range cp.Steps {
		r.Steps = append(r.Steps, planStep{ID: s.ID, Kind: s.Kind, Pod: s.Pod, State: s.State, Attempts: s.Attempts, Description: stepText(impl[s.ID], s.ID)})
	}
	return r
}

// stepText is what a step says it does in a plan (its ID when it says nothing).
func stepText(st engine.Step, id string) string {
	if t, ok := st.(steps.PlanTexter); ok {
		return t.PlanText()
	}
	if d, ok := st.(engine.Describer); ok {
		return d.Describe()
	}
	return id
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
	fmt.Fprintf(w, "%s: %s %s/%s, datacenter %s\n", title, r.resource, r.Namespace, r.Cluster, r.DC)
	for _, line := range r.kind.PlanLines(r.cp, r.Findings) {
		fmt.Fprintln(w, line)
	}
	if r.Force {
		fmt.Fprintln(w, "  --force: Cassandra's replication-factor check is skipped")
	}
	fmt.Fprintln(w, r.kind.Info().StepsHeader)
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
