package lifecycle

import (
	"context"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// reapDatacenterMarks takes back the marks a remove-dc left on datacenter resources
// before deleting them (operator.DatacenterMarker: cass-operator's
// decommission-on-delete, armed) when its operation is gone: a deletion someone makes
// later must not decommission a datacenter nobody is removing. A resource already
// being deleted keeps its mark (it is that deletion's).
func (l *Lifecycle) reapDatacenterMarks(ctx context.Context, ns string, stands func(id string) (bool, error)) {
	dm, ok := l.Adapter.(operator.DatacenterMarker)
	if !ok {
		return
	}
	marks, err := dm.DatacenterMarks(ctx, ns)
	if err != nil {
		fmt.Fprintf(l.ErrOut, "warning: cannot look for datacenter removal marks of operations that are gone: %v\n", err)
		return
	}
	for _, m := range marks {
		if m.Deleting {
			continue
		}
		if standing, err := stands(m.Op); err != nil || standing {
			continue
		}
		if err := dm.Unmark(ctx, ns, m.Name, m.Op, m.UID); err != nil {
			fmt.Fprintf(l.ErrOut, "warning: %s %s/%s carries the removal mark of operation %s, which is gone, and taking it back failed: %v; run the command again\n", l.Adapter.Kind(), ns, m.Name, m.Op, err)
			continue
		}
		fmt.Fprintf(l.ErrOut, "Took back the removal mark of operation %s (gone) from %s %s/%s: deleting it would no longer decommission its nodes on the plugin's behalf.\n", m.Op, l.Adapter.Kind(), ns, m.Name)
	}
}
