package cli

import (
	"fmt"
	"io"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/lifecycle"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// planReport is the JSON/YAML form of a plan (stable schema; "next" names the command
// to run next).
type planReport struct {
	Kind        string         `json:"kind"`
	OperationID string         `json:"operationID,omitempty"`
	Namespace   string         `json:"namespace"`
	Cluster     string         `json:"cluster"`
	DC          string         `json:"dc"`
	Racks       []string       `json:"racks"`
	From        map[string]int `json:"from"`
	To          int            `json:"to"`
	Force       bool           `json:"force"`
	DryRun      bool           `json:"dryRun"`
	Nodes       []planNode     `json:"nodes"`
	Steps       []planStep     `json:"steps"`
	Warnings    []string       `json:"warnings,omitempty"`
	Findings    []string       `json:"findings,omitempty"`
	StartedBy   *record.Holder `json:"startedBy,omitempty"`
	Next        string         `json:"next"`

	kind pub.Kind
	cp   *record.Checkpoint
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

// newPlanReport is the report of plan p as the lifecycle shows it; resource is the
// cluster resource's kind.
func newPlanReport(p lifecycle.Shown, resource string, dryRun bool) planReport {
	cp := p.CP
	r := planReport{
		Kind: cp.Kind, OperationID: cp.OperationID, Namespace: cp.Namespace, Cluster: cp.Cluster,
		DC: cp.Target.DC, Racks: cp.Target.Racks, From: cp.Target.From, To: cp.Target.Nodes,
		Force: cp.Force, DryRun: dryRun, Warnings: p.Warnings, Findings: p.Findings, Next: p.Next,
		Nodes: []planNode{}, Steps: []planStep{}, kind: p.Kind, cp: cp, resource: resource,
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
		r.Steps = append(r.Steps, planStep{ID: s.ID, Kind: s.Kind, Pod: s.Pod, State: s.State, Attempts: s.Attempts, Description: p.Texts[s.ID]})
	}
	return r
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
		case record.StateDone:
			mark = "[x]"
		case record.StateStarted:
			mark = "[~]"
		}
		fmt.Fprintf(w, "  %s %2d. %s\n", mark, i+1, s.Description)
	}
	for _, wmsg := range r.Warnings {
		fmt.Fprintf(w, "  [!!] %s\n", wmsg)
	}
}
