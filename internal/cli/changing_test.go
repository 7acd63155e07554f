package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// changingCase selects the cases of TestChangingWorld by "kind/change@k" (a regexp).
var (
	changingCase = flag.String("changing.case", "", "TestChangingWorld: run only the cases whose kind/change@boundary matches this regexp (e.g. 'scale-down/node-DN@7$')")
	changingFull = flag.Bool("changing.full", false, "TestChangingWorld: every boundary of the scale-up and the restart too (by default every third, and the last; with -short for the scale-down too)")
)

// otherHost is the machine of the run that takes the operation over in the takeover
// cases (its clock is 5 minutes off ours).
const otherHost = "laptop-b"

// changingKind is one operation of the changing-world matrix.
type changingKind struct {
	name    string
	opts    world.Opts
	args    []string
	changes []world.Change
	// subset: only every third boundary (and the last) unless -changing.full.
	subset bool
	// converged lists what is wrong with the end state after a successful run or resume.
	converged func(w *world.World, before map[string]string) []string
	// setup, when set, prepares each new world (replace-node: the node to replace dies).
	setup func(w *world.World)
	// abortAfter lists the changes after which a stopped run is aborted, not resumed
	// (replace-node: the dead node came back, so only abort ends it).
	abortAfter []string
}

// TestChangingWorld changes the world at every step boundary (right after each side
// effect, where the crash matrix kills the run) of a 4 -> 1 scale-down, a 1 -> 3 scale-up
// with cleanup and a rolling restart of 3 pods, each with the operator paused, one change
// per case: another node DN, UL or UJ; a planned pod re-created; the operator Deployment
// scaled up by someone; nodesPerRacks edited by someone; another run (another host,
// clock 5 minutes ahead or behind) taking the lock over; Cassandra refusing the next
// decommission. Each case must do nothing unsafe (world.Violations: no decommission,
// drain, cleanup or grow beside a node that is not UN, no PVC of a live pod or of a node
// still in the ring, no action by a run after it lost the lock, nothing acted on while
// the paused operator runs again, the operator not restored while the cluster resource
// and the StatefulSets disagree) and either finish correctly or stop with exit 3 or 4
// and a message naming what changed. Then, with the world put back, resume (abort after
// a refusal, and the new holder's abort after a takeover) must end consistent with the
// operator restored and no checkpoint left; an abort that refuses and names resume (a
// node may be leaving, a pod is being restarted) is followed by that resume, which must
// finish the operation. The operator's replica history is 1 -> 0 -> 1, with the foreign
// writes of operator-scaled-up accepted (operatorHistoryProblem).
//
// The scale-down covers every boundary; the scale-up and the restart every third one and
// the last (-changing.full: all; -short: every third for the scale-down too). With -v it
// prints one line per case ("changing-world: PASS|FAIL kind/change@boundary (time)
// reasons"); -changing.case selects cases by that name.
func TestChangingWorld(t *testing.T) {
	var filter *regexp.Regexp
	if *changingCase != "" {
		filter = regexp.MustCompile(*changingCase)
	}
	common := func(planned, other world.Picker) []world.Change {
		return []world.Change{
			world.NodeDown(other),
			world.NodeState("UL", other),
			world.NodeState("UJ", other),
			world.PodRecreated(planned),
			world.OperatorScaledUp("casskop"),
			world.Takeover(otherHost, 5*time.Minute),
			world.Takeover(otherHost, -5*time.Minute),
		}
	}
	downPlanned := world.PickHighest(1)
	down := changingKind{
		name: "scale-down",
		opts: world.Opts{Nodes: 4, Version: "4.1", Operator: true},
		args: []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "1", "--yes"},
		changes: append(common(downPlanned, world.PickOther(downPlanned)),
			world.NodesPerRackEdited(func(int) int { return 4 }),
			world.RefuseDecommission(world.PickNextDecommission(1))),
		converged: func(w *world.World, _ map[string]string) []string { return w.ScaledDownProblems(1) },
	}
	upPlanned := world.PickHighest(0)
	up := changingKind{
		name:   "scale-up",
		subset: true,
		opts:   world.Opts{Nodes: 1, Version: "4.1", Operator: true, JoinTime: 10 * time.Millisecond, StartTime: 5 * time.Millisecond},
		args:   []string{"scale", "demo", "-n", "cassandra", "--rack", "rack1", "--nodes", "3", "--cleanup", "--yes"},
		changes: append(common(upPlanned, world.PickPod(0)),
			world.NodesPerRackEdited(func(int) int { return 1 })),
		converged: func(w *world.World, _ map[string]string) []string {
			p := w.ScaledUpProblems(3)
			if n, _ := w.Cass.Node("demo-dc1-rack1-0"); n.Cleanups < 1 || n.Cleanups > 2 {
				p = append(p, fmt.Sprintf("node demo-dc1-rack1-0 cleaned %d times, want 1 (2 when a run was stopped in its cleanup)", n.Cleanups))
			}
			return p
		},
	}
	restartPlanned := world.PickNextRestart()
	restart := changingKind{
		name:   "restart",
		subset: true,
		opts:   world.Opts{Nodes: 3, Version: "4.1", Operator: true, StartTime: 5 * time.Millisecond},
		args:   []string{"restart", "demo", "-n", "cassandra", "--rack", "rack1", "--yes"},
		changes: append(common(restartPlanned, world.PickOther(restartPlanned)),
			world.NodesPerRackEdited(func(n int) int { return n + 1 })),
		converged: func(w *world.World, before map[string]string) []string {
			return w.RestartedProblems(rack1Pods, before)
		},
	}
	deadIDs := map[*world.World]world.DeadNode{}
	replace := changingKind{
		name: "replace-node",
		opts: world.Opts{Nodes: 3, RF: 3, Version: "4.1", Operator: true, JoinTime: 10 * time.Millisecond, StartTime: 60 * time.Millisecond},
		args: []string{"replace-node", "demo", "-n", "cassandra", "--pod", deadPod, "--yes"},
		changes: []world.Change{
			world.NodeDown(world.PickPod(0)),
			world.NodeState("UL", world.PickPod(0)),
			world.NodeState("UJ", world.PickPod(1)),
			world.PodRecreated(world.PickPod(2)),
			world.OperatorScaledUp("casskop"),
			world.Takeover(otherHost, 5*time.Minute),
			world.Takeover(otherHost, -5*time.Minute),
		},
		setup: func(w *world.World) {
			deadIDs[w] = w.KillNode(deadPod)
			w.ExpectReplace(deadPod)
		},
		abortAfter: []string{"pod-recreated"},
		converged: func(w *world.World, _ map[string]string) []string {
			return replacedProblems(w, deadIDs[w])
		},
	}
	counts := map[string]int{}
	failed := 0
	start := time.Now()
	for _, kind := range []changingKind{down, up, restart, replace} {
		t.Run(kind.name, func(t *testing.T) {
			ref := world.New(t, kind.opts)
			if kind.setup != nil {
				kind.setup(ref)
			}
			before := podUIDs(ref, rack1Pods)
			if _, stderr, code := runChanging(ref, "", 0, kind.args...); code != 0 {
				t.Fatalf("reference run: exit %d\n%s", code, stderr)
			}
			if p := append(kind.converged(ref, before), ref.Violations()...); len(p) > 0 {
				t.Fatalf("reference run: %v", p)
			}
			points := ref.SideEffects()
			n, na := 0, 0
			for _, ch := range kind.changes {
				for k := 1; k <= points; k++ {
					id := fmt.Sprintf("%s/%s@%d", kind.name, ch.Name, k)
					if filter != nil && !filter.MatchString(id) {
						continue
					}
					if (kind.subset || testing.Short()) && !*changingFull && k%3 != 1 && k != points {
						continue
					}
					caseStart := time.Now()
					problems, applied := changingCaseRun(t, kind, ch, k)
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
						fmt.Printf("changing-world: %s %s (%s) %s\n", verdict, id, time.Since(caseStart).Round(time.Millisecond), strings.Join(problems, "; "))
					}
				}
			}
			counts[kind.name] = n
			every := "each of"
			if (kind.subset || testing.Short()) && !*changingFull {
				every = "every third (and the last) of"
			}
			t.Logf("%s: %d cases (%d changes at %s %d step boundaries: every API write and nodetool decommission/drain/cleanup; %d did not fit their boundary)", kind.name, n, len(kind.changes), every, points, na)
		})
	}
	total := counts["scale-down"] + counts["scale-up"] + counts["restart"] + counts["replace-node"]
	t.Logf("changing-world matrix: %d cases in %s", total, time.Since(start).Round(time.Millisecond))
	fmt.Printf("changing-world matrix: %d cases (scale-down %d, scale-up %d, restart %d, replace-node %d), %d failed\n", total, counts["scale-down"], counts["scale-up"], counts["restart"], counts["replace-node"], failed)
}

// changingCaseRun runs one case: the operation with change ch made after side effect k,
// the world put back, then the follow-up. It returns what went wrong, and false when the
// change did not fit the world at that boundary (not a case).
func changingCaseRun(t *testing.T, kind changingKind, ch world.Change, k int) (problems []string, applied bool) {
	t.Helper()
	w := world.New(t, kind.opts)
	if kind.setup != nil {
		kind.setup(w)
	}
	before := podUIDs(w, rack1Pods)
	op := w.RecordReplicas("casskop")
	w.ChangeAfter(k, ch)
	_, stderr, code := runChanging(w, "", 0, kind.args...)
	names, applied := w.ChangeMade()
	w.PutBack()
	if !applied {
		return nil, false
	}
	// errorLine is the run's error line (or its first line), firstLine the same cut
	// short for a report.
	errorLine := func(s string) string {
		s = strings.TrimSpace(s)
		if i := strings.LastIndex(s, "\nError: "); i >= 0 {
			s = s[i+1:]
		}
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[:i]
		}
		return s
	}
	firstLine := func(s string) string {
		s = errorLine(s)
		if len(s) > 300 {
			s = s[:300] + "…"
		}
		return s
	}
	switch code {
	case 0:
	case operation.ExitRefused, exit.Interrupted:
		if !mentionsAny(stderr, names) {
			problems = append(problems, fmt.Sprintf("run stopped with exit %d without naming the change (%s): %s", code, strings.Join(names, " / "), firstLine(stderr)))
		}
	default:
		problems = append(problems, fmt.Sprintf("run exit %d, want 0, 3 or 4: %s", code, firstLine(stderr)))
	}
	followUp := "resume"
	if ch.Name == "decommission-refused" || strings.HasPrefix(ch.Name, "takeover") || (code != 0 && slices.Contains(kind.abortAfter, ch.Name)) {
		followUp = "abort"
	}
	host, skew := "", time.Duration(0)
	if strings.HasPrefix(ch.Name, "takeover") {
		host, skew = otherHost, 5*time.Minute
		if ch.Name == "takeover-5m" {
			skew = -skew
		}
	}
	resumed := false
	if w.HasCheckpoint() {
		_, stderr2, code2 := runChanging(w, host, skew, followUp, "demo", "-n", "cassandra", "--yes")
		if followUp == "abort" && code2 == operation.ExitRefused && strings.Contains(errorLine(stderr2), "resume") {
			// abort refuses where it must (a node may be leaving, a pod being restarted)
			// and names resume as the way forward: follow it, as that holder, and the
			// operation must then finish.
			_, stderr3, code3 := runChanging(w, host, skew, "resume", "demo", "-n", "cassandra", "--yes")
			resumed = true
			if code3 != 0 {
				problems = append(problems, fmt.Sprintf("abort refused (%s), then the resume it names exit %d: %s", firstLine(stderr2), code3, firstLine(stderr3)))
			}
		} else if code2 != 0 {
			problems = append(problems, fmt.Sprintf("then %s exit %d: %s", followUp, code2, firstLine(stderr2)))
		}
	}
	var end []string
	if followUp == "abort" && code != 0 && !resumed {
		end = w.ConsistentProblems()
	} else {
		end = kind.converged(w, before)
	}
	if r := w.DeploymentReplicas("casskop"); r != 1 {
		end = append(end, fmt.Sprintf("operator at %d replicas, want 1", r))
	}
	if p := operatorHistoryProblem(ch.Name, op.History()); p != "" {
		problems = append(problems, p)
	}
	for _, v := range w.Violations() {
		problems = append(problems, "violation: "+v)
	}
	for _, e := range end {
		problems = append(problems, "end state: "+e)
	}
	return problems, true
}

func mentionsAny(s string, names []string) bool {
	for _, n := range names {
		if n != "" && strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// runChanging is run for the changing world: the process's identity is on host
// ("test-host" when empty) with its clock skew off ours, the world knows which session
// acts (its lock check), and waits give up quickly (a stalled wait stops the run with
// exit 4 after --stall-after; --timeout leaves a simulated restart room on a loaded
// machine).
func runChanging(w *world.World, host string, skew time.Duration, args ...string) (stdout, stderr string, code int) {
	if host == "" {
		host = "test-host"
	}
	var out, errb bytes.Buffer
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, repair.Operator{Plugin: casskop.Plugin{}})
	o.Clients = &kube.Clients{Kube: w.Kube, Dynamic: w.Dyn, Discovery: w.Kube.Discovery(), Namespace: w.NS}
	o.Execer = w
	w.Kinds = o.Kinds.Schemas()
	o.Now = func() time.Time { return time.Now().Add(skew) }
	pid := w.StartProcess()
	defer w.EndProcess(pid)
	session := fmt.Sprintf("%s-s%d", host, pid)
	o.Identity = func() record.Holder {
		return record.Holder{Host: host, PID: pid, Session: session, LeaseSeconds: 60}
	}
	o.Alive = w.ProcessAlive
	w.Acting(session)
	defer w.Acting("")
	if needsRunFlags(args) {
		args = append(args, "--poll-interval", "1ms", "--timeout", "3s", "--stall-after", "200ms")
	}
	w.Process(0, func() { code = o.Execute(context.Background(), args) })
	return out.String(), errb.String(), code
}

// operatorHistoryProblem: the operator is paused once and restored once (1 -> 0 -> 1).
// When someone scaled it up (operator-scaled-up), their writes are in the history too:
// scaled up while paused, the run stops and resume pauses it again (1 -> 0 -> 1 -> 0 ->
// 1); before the pause, the pause and the restore follow their count (1 -> 2 -> 0 -> 2
// -> 1, the last write theirs, put back); after the restore, theirs alone (1 -> 0 -> 1
// -> 2 -> 1).
//
// An abort (after a takeover or a refusal) made before the pause leaves it untouched (1).
func operatorHistoryProblem(change string, got []int32) string {
	accepted := [][]int32{{1, 0, 1}}
	if strings.HasPrefix(change, "takeover") || change == "decommission-refused" {
		accepted = append(accepted, []int32{1})
	}
	if change == "operator-scaled-up" {
		accepted = append(accepted, []int32{1, 0, 1, 0, 1}, []int32{1, 2, 0, 2, 1}, []int32{1, 0, 1, 2, 1})
	}
	for _, a := range accepted {
		if fmt.Sprint(a) == fmt.Sprint(got) {
			return ""
		}
	}
	return fmt.Sprintf("operator replica history %v, want one of %v", got, accepted)
}
