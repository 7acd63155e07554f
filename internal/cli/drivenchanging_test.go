package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// drivenCase selects the cases of TestDrivenChangingWorld by "kind/change@k" (a regexp).
var drivenCase = flag.String("drivenchanging.case", "", "TestDrivenChangingWorld: run only the cases whose kind/change@boundary matches this regexp (e.g. 'up-1to3/node-DN@2$')")

// TestDrivenChangingWorld is the changing-world matrix of the cass-operator adapter: a
// driven scale-down 3 -> 1 and a scale-up 1 -> 3, and at each step boundary of the run
// (right after each of its side effects, where the crash matrix kills it) one change of
// the world: another node (pod 0, never removed) goes DN, someone edits the
// datacenter's spec.size (+1), the cass-operator Deployment is scaled to 0, its pod
// crash-loops (one replica, none ready), another run takes the checkpoint over. Each
// case: no unsafe request (the world's checks of every size write: all nodes UN, the
// operator running and ready, one node at a time; no write to the operator's
// Deployment; no action by a run after it lost the lock), the run finishes or stops
// with exit 3 or 4 naming the change, the plugin's size writes are planned steps in
// order, each once (sizeWriteProblems); then, with the world put back, resume (abort
// when resume refuses) converges: no dead end (world.DeadEnd: spec.size equal to the
// racks and the pods, no checkpoint, the operator at its replica), every node UN.
//
// With -v it prints one line per case ("driven-changing-world: PASS|FAIL id (time)
// the run's exit and last error line"); -drivenchanging.case selects cases by id.
func TestDrivenChangingWorld(t *testing.T) {
	var filter *regexp.Regexp
	if *drivenCase != "" {
		filter = regexp.MustCompile(*drivenCase)
	}
	changes := []world.Change{
		world.NodeDown(world.PickPod(0)),
		world.DCSizeEdited(+1),
		world.CassOperatorDown(),
		world.CassOperatorCrashLoop(),
		world.Takeover(otherHost, 5*time.Minute),
	}
	start := time.Now()
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
					if filter != nil && !filter.MatchString(id) {
						continue
					}
					caseStart := time.Now()
					problems, stopped, applied := drivenChangingCase(t, kind.from, kind.to, ch, k)
					if !applied {
						na++
						continue
					}
					n++
					verdict := "PASS"
					if len(problems) > 0 {
						verdict = "FAIL"
						failed++
						t.Errorf("%s: %s", id, strings.Join(problems, "; "))
					}
					if testing.Verbose() {
						fmt.Printf("driven-changing-world: %s %s (%s) %s\n", verdict, id, time.Since(caseStart).Round(time.Millisecond), stopped)
					}
				}
			}
			total += n
			t.Logf("%s: %d cases (%d changes at each of %d step boundaries; %d did not fit their boundary)", kind.name, n, len(changes), points, na)
		})
	}
	fmt.Printf("driven changing-world matrix: %d cases in %s, %d failed\n", total, time.Since(start).Round(time.Millisecond), failed)
}

// drivenChangingCase runs one case: scale from -> to with ch made after side effect k,
// the world put back, then resume (or abort when resume refuses). stopped is how the
// first run ended (its exit and last error line).
func drivenChangingCase(t *testing.T, from, to int, ch world.Change, k int) (problems []string, stopped string, applied bool) {
	t.Helper()
	w := drivenWorld(t, from)
	w.ChangeAfter(k, ch)
	w.ChainSideEffect()
	stderr, code := drunActing(w, scaleDC(to)...)
	names, applied := w.ChangeMade()
	w.PutBack()
	w.ChainSideEffect()
	if !applied {
		return nil, "", false
	}
	stopped = fmt.Sprintf("exit %d", code)
	if code != 0 {
		stopped += ": " + drivenErrLine(stderr)
	}
	switch code {
	case 0:
	case operation.ExitRefused, exit.Interrupted:
		if !mentionsAny(stderr, names) {
			problems = append(problems, fmt.Sprintf("run stopped with exit %d without naming the change (%s): %s", code, strings.Join(names, " / "), drivenErrLine(stderr)))
		}
	default:
		problems = append(problems, fmt.Sprintf("run exit %d, want 0, 3 or 4: %s", code, drivenErrLine(stderr)))
	}
	if w.HasDCCheckpoint() {
		stderr2, code2 := drunActing(w, "resume", "dc1", "-n", "cassandra", "--yes")
		if code2 != 0 {
			stderr3, code3 := drunActing(w, "abort", "dc1", "-n", "cassandra", "--yes")
			if code3 != 0 {
				problems = append(problems, fmt.Sprintf("resume exit %d (%s), then abort exit %d: %s", code2, drivenErrLine(stderr2), code3, drivenErrLine(stderr3)))
			}
		}
	}
	w.SettleOperator(400)
	if p := sizeWriteProblems(sizeWrites(w), sizeSteps(from, to), w.DCSizeEdits()); p != "" {
		problems = append(problems, p)
	}
	if bad := w.NotUN(); len(bad) > 0 {
		problems = append(problems, fmt.Sprintf("nodes not UN: %v", bad))
	}
	for _, d := range w.DeadEnd(world.CassOperatorDeployment) {
		problems = append(problems, "dead end: "+d)
	}
	for _, e := range w.OperatorErrors() {
		problems = append(problems, "operator error: "+e)
	}
	return problems, stopped, true
}

// sizeWriteProblems: the plugin's size writes are planned steps, in the plan's order,
// each once. A planned step is left out only where someone else made that very step
// (their edit asked what the plan asks next: the plan goes on from what is, never
// writing it again) or where the runs stopped (a prefix).
func sizeWriteProblems(writes, planned, byOthers []string) string {
	other := map[string]bool{}
	for _, e := range byOthers {
		other[e] = true
	}
	i := 0
	for _, p := range planned {
		if i < len(writes) && writes[i] == p {
			i++
		} else if !other[p] {
			break // the runs stopped before p: no write may follow
		}
	}
	if i != len(writes) {
		return fmt.Sprintf("spec.size writes %v, want the planned %v in order, each once (steps someone else made %v may be left out)", writes, planned, byOthers)
	}
	return ""
}

// TestSizeWriteProblems: the rule of the matrix's size writes.
func TestSizeWriteProblems(t *testing.T) {
	planned := []string{"1->2", "2->3"}
	for _, tc := range []struct {
		writes, others []string
		ok             bool
	}{
		{nil, nil, true},
		{[]string{"1->2"}, nil, true},
		{[]string{"1->2", "2->3"}, nil, true},
		{[]string{"2->3"}, []string{"1->2"}, true},                 // someone made the first step
		{[]string{"1->2", "2->3"}, []string{"1->2", "2->1"}, true}, // … and undid it
		{[]string{"2->3"}, nil, false},                             // a step skipped
		{[]string{"1->2", "1->2"}, nil, false},                     // twice
		{[]string{"2->3", "1->2"}, []string{"1->2"}, false},        // out of order
		{[]string{"1->2", "2->3", "3->4"}, nil, false},             // beyond the plan
	} {
		if got := sizeWriteProblems(tc.writes, planned, tc.others); (got == "") != tc.ok {
			t.Errorf("writes %v, others %v: %q, want ok %v", tc.writes, tc.others, got, tc.ok)
		}
	}
}

// drunActing is drun for the changing world: the world knows which session acts (its
// lock check) and the plugin's kinds (to read the checkpoint); waits give up quickly (a
// wait that cannot end, a node DN or the operator down, stops the run with exit 4 after
// --stall-after, as in the CassKop matrix).
func drunActing(w *world.World, args ...string) (stderr string, code int) {
	var errb bytes.Buffer
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &errb}, drivenBuild...)
	o.Clients = &kube.Clients{Kube: w.Kube, Dynamic: w.Dyn, Discovery: w.Kube.Discovery(), Namespace: w.NS}
	o.Execer = w
	w.Kinds = o.Kinds.Schemas()
	pid := w.StartProcess()
	defer w.EndProcess(pid)
	session := fmt.Sprintf("s%d", pid)
	o.Identity = func() record.Holder {
		return record.Holder{Host: "test-host", PID: pid, Session: session, LeaseSeconds: 60}
	}
	o.Alive = w.ProcessAlive
	o.Now, o.After = jumpingClock(time.Now)
	w.Acting(session)
	defer w.Acting("")
	if needsRunFlags(args) {
		args = append(args, "--poll-interval", "1ms", "--timeout", "3s", "--stall-after", "200ms")
	}
	w.Process(0, func() { code = o.Execute(context.Background(), args) })
	return errb.String(), code
}

func drivenErrLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\nError: "); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}
