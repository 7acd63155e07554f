package lifecycle

import (
	"fmt"
	"strings"

	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// refusalNext says where an operation stands after Cassandra refused a step (the step
// is pending again, nothing was started by it) and the ways forward: resume once the
// cause is fixed, the kind's retry when it has one (scale: the same scale with
// --force, re-planned by Replan in replan.go), or abort.
func (l *Lifecycle) refusalNext(kind pub.Kind, cp *record.Checkpoint, step string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The operation stopped at step %s, which is pending again (nothing was started); the checkpoint is kept. Check with: %s. Then either:\n", step, l.StatusHint())
	fmt.Fprintf(&b, "  - fix the cause, then run: %s\n", l.ResumeHint())
	if c, ok := kind.(pub.Commander); ok && c.Command().Retry != nil {
		if retry := c.Command().Retry(cp); retry != "" {
			fmt.Fprintf(&b, "  - or %s\n", retry)
		}
	}
	fmt.Fprintf(&b, "  - or stop here, leaving the cluster consistent and the operator restored: kubectl cassandra abort -n %s %s", l.Cluster.Namespace, l.Cluster.Name)
	return b.String()
}
