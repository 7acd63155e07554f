package scaledown

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// The ring read started before the racks are read asks the pod drivenReader then
// picks, whenever the first rack that keeps nodes has its pods: one ring read, not two.
func TestLikelyReaderIsTheReader(t *testing.T) {
	dc := topology.DC{Name: "dc1", Racks: []topology.Rack{
		{Name: "r1", StatefulSet: "c-dc1-r1-sts"}, {Name: "r2", StatefulSet: "c-dc1-r2-sts"},
	}}
	states := func(cur1, cur2 int) []operation.RackNow {
		var out []operation.RackNow
		for i, cur := range []int{cur1, cur2} {
			r := dc.Racks[i]
			pods := map[int]corev1.Pod{}
			for o := 0; o < cur; o++ {
				pods[o] = corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: topology.PodName(r.StatefulSet, o)}}
			}
			out = append(out, operation.RackNow{Rack: r, Pods: pods, Cur: cur})
		}
		return out
	}
	for _, c := range []struct {
		name       string
		wanted     map[string]int
		cur1, cur2 int
		same       bool
	}{
		{"both keep nodes", map[string]int{"r1": 1, "r2": 1}, 2, 2, true},
		{"the first rack empties", map[string]int{"r1": 0, "r2": 1}, 1, 2, true},
		{"the first rack has no pods (a wrong guess: read anew)", map[string]int{"r1": 1, "r2": 1}, 0, 2, false},
	} {
		got, want := likelyReader(dc, c.wanted), drivenReader(states(c.cur1, c.cur2), c.wanted)
		if (got == want) != c.same {
			t.Errorf("%s: likely %q, reader %q", c.name, got, want)
		}
	}
}
