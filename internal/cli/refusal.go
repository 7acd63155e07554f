package cli

import (
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
)

// refusalNext says where an operation stands after Cassandra refused a decommission
// (the step is pending again, nothing was removed by it) and the ways forward: resume
// once the cause is fixed, the same scale with --force (re-planned, see replanForce in
// replan.go), or abort.
func refusalNext(s *session, cp *checkpoint.Checkpoint, step string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The operation stopped at step %s, which is pending again (nothing was started); the checkpoint is kept. Check with: %s. Then either:\n", step, s.statusHint())
	fmt.Fprintf(&b, "  - fix the cause, then run: %s\n", s.resumeHint())
	if cp.Kind == checkpoint.KindScaleDown && !cp.Force {
		fmt.Fprintf(&b, "  - or skip Cassandra's replication check (where Cassandra allows it; the plan is made again with --force): %s\n", scaleCommand(s, cp, true))
	}
	fmt.Fprintf(&b, "  - or stop here, leaving the cluster consistent and the operator restored: kubectl cassandra abort -n %s %s", s.cluster.Namespace, s.cluster.Name)
	return b.String()
}

// scaleCommand is the scale command with the checkpoint's target.
func scaleCommand(s *session, cp *checkpoint.Checkpoint, force bool) string {
	c := fmt.Sprintf("kubectl cassandra scale -n %s %s --dc %s", s.cluster.Namespace, s.cluster.Name, cp.Target.DC)
	if len(cp.Target.Racks) == 1 {
		// A --dc plan of a one-rack DC has the same target as --rack.
		c += " --rack " + cp.Target.Racks[0]
	}
	c += fmt.Sprintf(" --nodes %d", cp.Target.Nodes)
	if force {
		c += " --force"
	}
	return c + " --yes"
}
