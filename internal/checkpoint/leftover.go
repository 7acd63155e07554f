package checkpoint

import (
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// validLeftovers checks the left-over records (bad: why not, "" when fine) and returns
// their pods, which their steps name.
func validLeftovers(ls []record.Leftover, nodes map[string]bool) (pods map[string]bool, bad string) {
	pods = map[string]bool{}
	for i, l := range ls {
		switch {
		case l.Pod == "" || l.StatefulSet == "" || l.Ordinal < 0 || len(l.PVCs) == 0:
			return nil, fmt.Sprintf("left-over record %d is incomplete", i)
		case pods[l.Pod] || nodes[l.Pod]:
			return nil, fmt.Sprintf("pod %s is planned twice", l.Pod)
		}
		for _, p := range l.PVCs {
			if p.Name == "" || p.UID == "" {
				return nil, fmt.Sprintf("left-over claims of %s include one without name or UID", l.Pod)
			}
		}
		pods[l.Pod] = true
	}
	return pods, ""
}
