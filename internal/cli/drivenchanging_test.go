package cli

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// TestDrivenChangingWorld is the changing-world matrix of the cass-operator adapter: a
// driven scale-down 3 -> 1 and a scale-up 1 -> 3, and at each step boundary of the run
// (right after each of its side effects, where the crash matrix kills it) one change of
// the world: another node (pod 0, never removed) goes DN, someone edits the
// datacenter's spec.size (+1), the cass-operator Deployment is scaled to 0, another run
// takes the checkpoint over. Each case: no unsafe request (world's checks, every size
// write of every run: all nodes UN, the operator running, one node at a time, never
// from someone else's size), the run finishes or stops with exit 3 or 4 naming the
// change, the plugin's size writes are the planned ones in order (a prefix of them,
// none twice); then, with the world put back, resume (abort when resume refuses)
// converges: spec.size equal to the pods, no checkpoint, every node UN.
func TestDrivenChangingWorld(t *testing.T) {
	changes := []world.Change{
		world.NodeDown(world.PickDrivenPod(0)),
		world.DCSizeEdited(+1),
		world.CassOperatorDown(),
		world.DrivenTakeover(otherHost, 5*time.Minute),
	}
	total, failed := 0, 0
	for _, kind := range []struct {
		name     string
		from, to int
	}{{"down-3to1", 3, 1}, {"up-1to3", 1, 3}} {
		t.Run(kind.name, func(t *testing.T) {
			ref := drivenWorld(t, kind.from)
			if _, errOut, code, _ := drun(ref, 0, scaleDC(kind.to)...); code != 0 {
				t.Fatalf("reference run: exit %d\n%s", code, errOut)
			}
			points := ref.SideEffects()
			n, na := 0, 0
			for _, ch := range changes {
				for k := 1; k <= points; k++ {
					id := fmt.Sprintf("%s/%s@%d", kind.name, ch.Name, k)
					problems, applied := drivenChangingCase(t, kind.from, kind.to, ch, k)
					if !applied {
						na++
						continue
					}
					n++
					if len(problems) > 0 {
						failed++
						t.Errorf("%s: %s", id, strings.Join(problems, "; "))
					} else if testing.Verbose() {
						fmt.Printf("driven-changing-world: PASS %s\n", id)
					}
				}
			}
			total += n
			t.Logf("%s: %d cases (%d changes at each of %d step boundaries; %d did not fit their boundary)", kind.name, n, len(changes), points, na)
		})
	}
	fmt.Printf("driven changing-world matrix: %d cases, %d failed\n", total, failed)
}

// drivenChangingCase runs one case: scale from -> to with ch made after side effect k,
// the world put back, then resume (or abort when resume refuses).
func drivenChangingCase(t *testing.T, from, to int, ch world.Change, k int) (problems []string, applied bool) {
	t.Helper()
	w := drivenWorld(t, from)
	w.Kinds = NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}, drivenBuild...).Kinds.Schemas()
	w.ChangeAfter(k, ch)
	w.ChainSideEffect()
	_, stderr, code, _ := drun(w, 0, append(scaleDC(to), drivenWaitFlags...)...)
	names, applied := w.ChangeMade()
	w.PutBack()
	w.ChainSideEffect()
	if !applied {
		return nil, false
	}
	switch code {
	case 0:
	case exit.Refused, exit.Interrupted:
		if !mentionsAny(stderr, names) {
			problems = append(problems, fmt.Sprintf("run stopped with exit %d without naming the change (%s): %s", code, strings.Join(names, " / "), drivenErrLine(stderr)))
		}
	default:
		problems = append(problems, fmt.Sprintf("run exit %d, want 0, 3 or 4: %s", code, drivenErrLine(stderr)))
	}
	if w.HasDCCheckpoint() {
		_, stderr2, code2, _ := drun(w, 0, append([]string{"resume", "dc1", "-n", "cassandra", "--yes"}, drivenWaitFlags...)...)
		if code2 != 0 {
			_, stderr3, code3, _ := drun(w, 0, "abort", "dc1", "-n", "cassandra", "--yes")
			if code3 != 0 {
				problems = append(problems, fmt.Sprintf("resume exit %d (%s), then abort exit %d: %s", code2, drivenErrLine(stderr2), code3, drivenErrLine(stderr3)))
			}
		}
	}
	w.SettleOperator(400)
	problems = append(problems, drivenEndProblems(w, from, to)...)
	for _, v := range w.Violations() {
		problems = append(problems, "violation: "+v)
	}
	for _, e := range w.OperatorErrors() {
		problems = append(problems, "operator error: "+e)
	}
	return problems, true
}

// drivenEndProblems: the plugin's size writes are planned ones, each once, in order; the
// datacenter is consistent (spec.size equal to its pods and to the StatefulSet, nodes
// UN, no checkpoint).
func drivenEndProblems(w *world.World, from, to int) []string {
	var p []string
	writes, planned := sizeWrites(w), sizeSteps(from, to)
	if len(writes) > len(planned) || strings.Join(writes, " ") != strings.Join(planned[:min(len(writes), len(planned))], " ") {
		p = append(p, fmt.Sprintf("spec.size writes %v, want a prefix of %v", writes, planned))
	}
	size := w.DCSize()
	var pods []string
	for _, n := range w.PodNames() {
		if strings.HasPrefix(n, "demo-dc1-rack1-sts-") {
			pods = append(pods, n)
		}
	}
	if len(pods) != size {
		p = append(p, fmt.Sprintf("spec.size %d but %d Cassandra pods %v", size, len(pods), pods))
	}
	if r := w.Replicas("rack1"); r != size {
		p = append(p, fmt.Sprintf("spec.size %d but the StatefulSet has %d replicas", size, r))
	}
	if bad := w.NotUN(); len(bad) > 0 {
		p = append(p, fmt.Sprintf("nodes not UN: %v", bad))
	}
	if w.HasDCCheckpoint() {
		p = append(p, "checkpoint still present")
	}
	if r := w.DeploymentReplicas(world.CassOperatorDeployment); r != 1 {
		p = append(p, fmt.Sprintf("cass-operator at %d replicas", r))
	}
	return p
}

// drivenWaitFlags: a wait that cannot end (a node DN, the operator down) stops the run
// quickly (exit 4 after --stall-after), as in the CassKop matrix.
var drivenWaitFlags = []string{"--timeout", "3s", "--stall-after", "200ms"}

func drivenErrLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\nError: "); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
