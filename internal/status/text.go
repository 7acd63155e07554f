package status

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Style is how Text words and colours a report.
type Style struct {
	Paint output.Painter
	// Target says an operation's target in words (internal/operation/lifecycle, OperationTarget).
	Target func(kind string, t record.Target) string
}

// Text writes rep as `kubectl cassandra status` prints it: the resource, the operation
// in flight and the operator, then each rack's pods and claims, then the warnings and
// the command to run next.
func Text(w io.Writer, rep Report, s Style) {
	p := s.Paint
	c := rep.Cluster
	ver := ""
	if c.ServerVersion != "" {
		ver = ", Cassandra " + c.ServerVersion
	}
	fmt.Fprintf(w, "%s %s/%s (%s, %s%s)\n", c.Kind, c.Namespace, c.Name, c.Operator, c.APIVersion, ver)
	operationText(w, rep.Operation, s)
	if lo := rep.LastOperation; lo != nil {
		fmt.Fprintf(w, "Last:       %s %s %s at %s: %s\n", lo.Kind, lo.OperationID, lo.Result, lo.FinishedAt.Format(timeFormat), lo.Summary)
	}
	operatorText(w, rep, p)
	for _, dc := range rep.Datacenters {
		fmt.Fprintf(w, "\nDatacenter %s (%s)\n", dc.Name, dc.Spec)
		for _, r := range dc.Racks {
			rackText(w, r, p)
		}
	}
	for _, wmsg := range rep.Warnings {
		fmt.Fprintf(w, "%s %s\n", p.Warn("[!!]"), wmsg)
	}
	if rep.Next != "" {
		fmt.Fprintf(w, "\nNext: %s\n", rep.Next)
	}
}

// operationText is the operation in flight: its step count, current step and progress.
func operationText(w io.Writer, op *Operation, s Style) {
	p := s.Paint
	switch {
	case op == nil:
		fmt.Fprintln(w, "Operation:  none in flight")
		return
	case op.Error != "":
		fmt.Fprintf(w, "Operation:  %s checkpoint unusable: %s\n", p.Bad("[XX]"), op.Error)
		return
	}
	// A live run is no problem to flag: only a holder that stopped is.
	mark, state := p.Bold("[..]"), "running"
	if !op.Running {
		mark, state = p.Warn("[!!]"), "stopped"
	}
	fmt.Fprintf(w, "Operation:  %s %s %s, %s, step %d/%d done, started by %s at %s\n",
		mark, op.Kind, op.ID, s.Target(op.Kind, op.Target), op.StepsDone, op.StepsTotal, op.StartedBy, op.StartedAt)
	fmt.Fprintf(w, "            holder %s: %s (%s)\n", op.Holder, state, op.Judged)
	if cur := op.CurrentStep; cur != nil {
		errText := ""
		if cur.LastError != "" {
			errText = ", last error: " + cur.LastError
		}
		fmt.Fprintf(w, "            current step %s (%s, attempts: %d%s)\n", cur.ID, cur.State, cur.Attempts, errText)
	}
	if op.Progress != nil {
		fmt.Fprintf(w, "            progress %s (read at %s)\n", output.ProgressText(*op.Progress), op.Progress.At.Format(timeFormat))
	}
}

// operatorText says whether the operator is idle, paused by the operation, or busy.
func operatorText(w io.Writer, rep Report, p output.Painter) {
	title := fmt.Sprintf("%-12s", rep.Cluster.OperatorTitle+":")
	if len(rep.OperatorBusy) == 0 {
		if len(rep.Operators) > 0 {
			fmt.Fprintf(w, "%s%s idle, running (%s): it scales the datacenter itself, asked one node at a time\n", title, p.OK("[OK]"), strings.Join(rep.Operators, ", "))
		} else {
			fmt.Fprintf(w, "%s%s idle\n", title, p.OK("[OK]"))
		}
	}
	if op := rep.Operation; op != nil && op.PausedOperator != nil {
		po := op.PausedOperator
		fmt.Fprintf(w, "Operator:   %s %s/%s PAUSED by kubectl-cassandra (replicas %d -> 0) for operation %s; restored to %d at its end, by resume or by abort\n",
			p.Warn("[!!]"), po.Namespace, po.Name, po.Replicas, op.ID, po.Replicas)
	}
	for _, b := range rep.OperatorBusy {
		fmt.Fprintf(w, "%s%s %s\n", title, p.Warn("[!!]"), b)
	}
	for _, s := range rep.StalePauses {
		fmt.Fprintf(w, "%s%s %s\n", title, p.Warn("[!!]"), s)
	}
}

// rackText is one rack: its StatefulSet, the space check, its pods and its claims.
func rackText(w io.Writer, r Rack, p output.Painter) {
	if !r.Exists {
		fmt.Fprintf(w, "  Rack %s: %s StatefulSet %s missing\n", r.Name, p.Bad("[XX]"), r.StatefulSet)
		return
	}
	mark := p.OK("[OK]")
	if r.ReadyReplicas != r.Replicas || r.Replicas != r.Nodes {
		mark = p.Warn("[!!]")
	}
	fmt.Fprintf(w, "  Rack %s: %s StatefulSet %s, %d/%d ready\n", r.Name, mark, r.StatefulSet, r.ReadyReplicas, r.Replicas)
	if ro := r.RemoveOne; ro != nil {
		spaceText(w, ro, p)
	}
	// Align plain text first, colour after: escape codes would skew tabwriter.
	var table bytes.Buffer
	podTable(&table, r.Pods)
	claimTable(&table, r.PVCs)
	fmt.Fprint(w, strings.NewReplacer("[!!] terminating", p.Warn("[!!] terminating"), "[OK]", p.OK("[OK]"), "[XX]", p.Bad("[XX]"), "  gone\n", "  "+p.Warn("gone")+"\n").Replace(table.String()))
}

// spaceText says whether the rack's highest ordinal could be removed for its space.
func spaceText(w io.Writer, ro *Space, p output.Painter) {
	switch {
	case !ro.Known:
		fmt.Fprintf(w, "    removing %s: free space unknown (a Load or a data volume capacity is not known)\n", ro.Pod)
	case ro.Fits:
		fmt.Fprintf(w, "    removing %s: %s its %s fit in the %s free on the others\n", ro.Pod, p.OK("[OK]"), output.Bytes(ro.NeedBytes), output.Bytes(ro.FreeBytes))
	default:
		fmt.Fprintf(w, "    removing %s: %s its %s do not fit in the %s free on the others\n", ro.Pod, p.Warn("[!!]"), output.Bytes(ro.NeedBytes), output.Bytes(ro.FreeBytes))
	}
}

// podTable is the rack's pods, uncoloured.
func podTable(w io.Writer, pods []Pod) {
	states := false
	for _, p := range pods {
		states = states || p.OperatorState != ""
	}
	rows := [][]string{{"POD", "READY", "NODE", "LOAD", "OWNS", "HOST ID", "IP"}}
	if states {
		rows[0] = append(rows[0], "OPERATOR")
	}
	for _, p := range pods {
		row := []string{p.Name, p.readiness(), dash(p.NodeState), dash(p.Load), dash(p.Owns), dash(p.HostID), dash(p.IP)}
		if states {
			row = append(row, dash(p.OperatorState))
		}
		rows = append(rows, row)
	}
	table(w, rows)
}

// claimTable is the rack's claims, uncoloured.
func claimTable(w io.Writer, pvcs []PVC) {
	rows := [][]string{{"PVC", "PHASE", "CAPACITY", "POD"}}
	for _, c := range pvcs {
		rows = append(rows, []string{c.Name, c.phase(), dash(c.Capacity), c.pod()})
	}
	table(w, rows)
}

// readiness is the pod's READY cell.
func (p Pod) readiness() string {
	switch {
	case p.Terminating:
		return "[!!] terminating"
	case !p.Ready:
		return "[XX]"
	}
	return "[OK]"
}

// pod is the claim's POD cell: whether its pod exists.
func (c PVC) pod() string {
	if c.PodExists {
		return "exists"
	}
	return "gone"
}

// table writes rows (the first is the header) in aligned columns, indented under their
// rack.
func table(w io.Writer, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "    %s\n", strings.Join(r, "\t"))
	}
	_ = tw.Flush()
}

// phase is the claim's phase, and whether it is being deleted.
func (c PVC) phase() string {
	if c.Terminating {
		return c.Phase + " (terminating)"
	}
	return c.Phase
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
