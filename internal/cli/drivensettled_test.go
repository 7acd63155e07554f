package cli

import (
	"strings"
	"testing"
	"time"

	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// settlingActions are the stand-in's actions that settle its own status: a pod labelled
// Started (or Started-not-Ready on its way), its progress Ready, a scaling condition
// cleared.
var settlingActions = map[string]bool{
	"operator " + string(standin.ActLabelStarted):                    true,
	"operator " + string(standin.ActLabelStartedNotReady):            true,
	"operator " + string(standin.ProgressAction("Ready")):            true,
	"operator " + string(standin.CondAction("ScalingUp", "False")):   true,
	"operator " + string(standin.CondAction("ScalingDown", "False")): true,
}

// TestDrivenOperationsEndOnceTheOperatorSettled: a restart through a task, a scale-up,
// a scale-down and a replace-node through cass-operator end only once the operator's own
// status is settled (issue 33 item 7), with an operator that labels its pods Started
// late, as the real one does: in the history, no settling action of the
// operator comes after the plugin's last side effect (the checkpoint cleared), however
// long the operator is stepped afterwards, and the world the run left is settled.
func TestDrivenOperationsEndOnceTheOperatorSettled(t *testing.T) {
	cases := []struct {
		name string
		w    func(t *testing.T) *world.World
		args []string
	}{
		{"restart", func(t *testing.T) *world.World { return lateWorld(t, 3) }, restartDC()},
		{"scale-up", func(t *testing.T) *world.World { return lateWorld(t, 3) }, scaleDC(4)},
		{"scale-down", func(t *testing.T) *world.World { return lateWorld(t, 3) }, scaleDC(2)},
		{"replace-node", func(t *testing.T) *world.World {
			w := world.New(t, world.Opts{CassOperator: true, Nodes: 3, RF: 3, JoinTime: 300 * time.Millisecond, LabelStartedAfter: lateLabels})
			w.KillNode(pod(1))
			w.ExpectReplace(pod(1))
			return w
		}, replaceDC(pod(1))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := c.w(t)
			out, errOut, code, _ := drun(w, 0, c.args...)
			if code != 0 {
				t.Fatalf("%s: exit %d\n%s\n%s\noperator: %v", c.name, code, out, errOut, w.OperatorActions())
			}
			// Step the operator on well past its late labels (SettleOperator would stop
			// at the passes that only wait).
			for range 4 * lateLabels {
				w.StepOperator()
			}
			tl := w.Timeline()
			last := -1
			for i, e := range tl {
				if strings.HasPrefix(e, "plugin ") {
					last = i
				}
			}
			if last < 0 || !strings.Contains(tl[last], "cassandradatacenters/dc1") {
				t.Fatalf("%s: the plugin's last side effect is %q, want the checkpoint cleared on cassandradatacenters/dc1:\n%s", c.name, at(tl, last), strings.Join(tl, "\n"))
			}
			for _, e := range tl[last+1:] {
				if settlingActions[e] {
					t.Errorf("%s: the operator settled after the operation ended (%s after %s):\n%s", c.name, e, tl[last], strings.Join(tl, "\n"))
					break
				}
			}
			if !strings.Contains(out+errOut, "Done:") {
				t.Errorf("%s: no Done line:\n%s\n%s", c.name, out, errOut)
			}
		})
	}
}

// lateLabels is how many passes after a pod is ready the stand-in labels it Started:
// the plugin's own checks then hold well before the operator settled.
const lateLabels = 30

func lateWorld(t *testing.T, nodes int) *world.World {
	return world.New(t, world.Opts{CassOperator: true, Nodes: nodes, Racks: []string{"rack1"}, LabelStartedAfter: lateLabels})
}

func at(s []string, i int) string {
	if i < 0 || i >= len(s) {
		return ""
	}
	return s[i]
}
