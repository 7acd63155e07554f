package cli

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	standin "github.com/kubectl-cassandra/kubectl-cassandra/test/standin/cassoperator"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// kindSearchCase selects the states of TestKindSearch by "operator/kind/case/disturbance@k"
// (a regexp), to re-run one.
var (
	kindSearchCase = flag.String("kindsearch.case", "", "TestKindSearch: explore only the states whose operator/kind/case/disturbance@k matches this regexp")
	kindSearchSkip = flag.String("kindsearch.skip", "", "TestKindSearch: leave out the states whose operator/kind/case/disturbance@k matches this regexp")
)

// searchCase is one operation of a kind, on one operator, in a world set up for it.
type searchCase struct {
	name  string
	opts  world.Opts
	setup func(t *testing.T, w *world.World)
	// args is the command; again is what an SRE runs when no record is left and the
	// cluster is not at a consistent end (the command that started it).
	args, again []string
}

// searchOperator is what the search needs of one operator's worlds: the operator as the
// kinds name it (Info().Operator), its Deployment, the resource resume and abort name,
// what the operator does between commands, the disturbances that fit it (besides the
// crash every world gets) and a case for every kind its build offers.
type searchOperator struct {
	name, deployment, cluster string
	settle                    func(w *world.World)
	disturbances              []world.Change
	cases                     map[string][]searchCase
}

// searchOperators are both operators' worlds. The catalogue of disturbances, at every
// step boundary: a crash; the record wiped; the cluster resource deleted; a kept node
// DN, or its JVM gone (a stream source among them); another run taking the lock over; a replaced node back; CassKop's Deployment
// re-created or scaled up by hand while paused; the user's start script reverted; while a
// datacenter kind runs, a node of dc2 DN and (add-dc) a rebuild's stream failing part-way;
// cass-operator down; the operation's task deleted (before it finished, or after, by its
// TTL) or failed.
func searchOperators() []searchOperator {
	common := []world.Change{world.RecordWiped(), world.ClusterDeleted(), world.NodeDown(world.PickPod(0)), world.NodeKilled(world.PickPod(0)), world.Takeover(otherHost, 5*time.Minute)}
	demo := func(cmd string, extra ...string) []string {
		return append(append([]string{cmd, "demo", "-n", "cassandra", "--yes"}, extra...), searchFlags...)
	}
	dc1 := func(cmd string, extra ...string) []string {
		return append(append([]string{cmd, "dc1", "-n", "cassandra", "--yes"}, extra...), searchFlags...)
	}
	kill := func(pod string) func(*testing.T, *world.World) {
		return func(_ *testing.T, w *world.World) { w.KillNode(pod); w.ExpectReplace(pod) }
	}
	casskopNodes := world.Opts{Nodes: 3, RF: 3, Operator: true}
	coNodes := world.Opts{CassOperator: true, Nodes: 3, RF: 3}
	coOne := world.Opts{CassOperator: true, Nodes: 1}
	casskopOne := world.Opts{Nodes: 1, Operator: true}
	return []searchOperator{
		{
			name: "casskop", deployment: "casskop", cluster: "demo",
			disturbances: append(append([]world.Change{}, common...),
				world.OperatorRecreated("casskop"), world.OperatorScaledUp("casskop"), world.StartScriptReverted(), world.NodeBack(deadPod),
				world.DatacenterNodeDown(world.PickDC("dc2", 0)), world.RebuildStreamFails()),
			cases: map[string][]searchCase{
				"scale-down": {{name: "3->1", opts: world.Opts{Nodes: 3, Operator: true}, args: demo("scale", "--rack", "rack1", "--nodes", "1"), again: demo("scale", "--rack", "rack1", "--nodes", "1")}},
				"scale-up": {{name: "1->2 --stream-throughput", opts: casskopOne,
					args: demo("scale", "--rack", "rack1", "--nodes", "2", "--stream-throughput", "100MiB/s"), again: demo("scale", "--rack", "rack1", "--nodes", "2")}},
				"restart": {{name: "rack1", opts: casskopNodes, args: demo("restart", "--rack", "rack1"), again: demo("restart", "--rack", "rack1")}},
				"replace-node": {{name: "dead " + deadPod + " --stream-throughput", opts: casskopNodes, setup: kill(deadPod),
					args: demo("replace-node", "--pod", deadPod, "--stream-throughput", "100MiB/s"), again: demo("replace-node", "--pod", deadPod)}},
				"add-dc": {{name: "dc2 --alter-keyspaces --stream-throughput", opts: world.Opts{Racks: []string{"rack1", "rack2"}, Topology: true, Nodes: 1, RF: 1, Operator: true},
					args:  demo("add-dc", "--dc", "dc2", "--nodes", "1", "--rebuild-from", "dc1", "--alter-keyspaces", "--stream-throughput", "100MiB/s"),
					again: demo("add-dc", "--dc", "dc2", "--nodes", "1", "--rebuild-from", "dc1", "--alter-keyspaces")}},
				"remove-dc": {{name: "dc2 --alter-keyspaces", opts: world.Opts{DCs: []string{"dc1", "dc2"}, Racks: []string{"rack1", "rack2"}, Nodes: 1, RF: 1, Operator: true},
					args: demo("remove-dc", "--dc", "dc2", "--alter-keyspaces"), again: demo("remove-dc", "--dc", "dc2", "--alter-keyspaces")}},
				"repair-operator-state": {{name: "todo-decommissioned", opts: world.Opts{Nodes: 3, Operator: true},
					setup: func(t *testing.T, w *world.World) { makeStuck(t, w, "todo-decommissioned") },
					args:  demo("repair-operator-state"), again: demo("repair-operator-state")}},
			},
		},
		{
			name: "cass-operator", deployment: world.CassOperatorDeployment, cluster: "dc1",
			settle: func(w *world.World) { w.SettleOperator(400) },
			disturbances: append(append([]world.Change{}, common...), world.CassOperatorDown(), world.TaskDeleted(), world.TaskFailed(), world.NodeBack(pod(1)),
				world.DatacenterNodeDown(world.PickDC("dc2", 0)), world.RebuildStreamFails()),
			cases: map[string][]searchCase{
				"scale-down": {{name: "3->2 --stream-throughput", opts: world.Opts{CassOperator: true, Nodes: 3},
					args: dc1("scale", "--nodes", "2", "--stream-throughput", "100MiB/s"), again: dc1("scale", "--nodes", "2")}},
				"scale-up": {{name: "1->2", opts: coOne, args: dc1("scale", "--nodes", "2"), again: dc1("scale", "--nodes", "2")}},
				"restart":  {{name: "dc1", opts: coNodes, args: dc1("restart", "--dc", "dc1"), again: dc1("restart", "--dc", "dc1")}},
				"replace-node": {{name: "dead " + pod(1), opts: coNodes, setup: kill(pod(1)),
					args: dc1("replace-node", "--pod", pod(1)), again: dc1("replace-node", "--pod", pod(1))}},
				"add-dc": {{name: "dc2 -f --alter-keyspaces", opts: world.Opts{CassOperator: true, Nodes: 2, RF: 1},
					args: dc1("add-dc", "-f", dc2Manifest(), "--alter-keyspaces"), again: dc1("add-dc", "-f", dc2Manifest(), "--alter-keyspaces")}},
				"remove-dc": {{name: "dc1 --alter-keyspaces", opts: world.Opts{CassOperator: true, Nodes: 2, RF: 1, OtherDC: "dc2", OtherDCNodes: 1},
					args: dc1("remove-dc", "--dc", "dc1", "--alter-keyspaces"), again: dc1("remove-dc", "--dc", "dc1", "--alter-keyspaces")}},
				"repair-cass-operator": {{name: "decommission left unlabelled, carrying a --stream-throughput scale", opts: world.Opts{CassOperator: true, Nodes: 3},
					setup: func(t *testing.T, w *world.World) {
						w.KillOperatorAfter(standin.ActDecommission)
						if _, stderr, code, _ := drun(w, 0, append(scaleDC(2), "--stream-throughput", "100MiB/s")...); code == 0 {
							t.Fatalf("setup: the scale did not stop at the killed operator\n%s", stderr)
						}
					},
					args: dc1("repair-operator-state"), again: dc1("repair-operator-state")}},
			},
		},
	}
}

// TestKindSearch is the dead-end search of every operation kind on every operator,
// written once over the kind contract: each kind the build registers must have a case
// on each operator that offers it (a new kind fails here until it has one, and then
// gets the whole search). For each case, the reference run counts its side effects;
// at every boundary, every disturbance of the catalogue that fits the world there is
// made (the crash kills the run), the world is put back, and the SRE's recovery runs
// (resume; abort when resume stops, abort --grow-back when abort offers it; the
// command again when no record is left). Each state must end consistent: the operator
// running and held by nobody, no checkpoint, counts and pods agreeing (world.DeadEnd),
// no safety check fired on the way (no node of the ring removed unplanned, no claim
// of a ring member deleted: world.Violations), and no mark left (world.MarksLeft: a
// pause holder, a stream-limit mark or a limit not put back, a replace block in the
// start script, an unfinished task). It prints the count of states, dead ends,
// data-loss paths and marks left, per kind and operator.
func TestKindSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("the kind search runs in the full unit suite")
	}
	var filter *regexp.Regexp
	if *kindSearchCase != "" {
		filter = regexp.MustCompile(*kindSearchCase)
	}
	kinds := NewOptions(genericiooptions.NewTestIOStreamsDiscard(), drivenBuild...).Kinds.All()
	start := time.Now()
	var report []string
	for _, so := range searchOperators() {
		for _, k := range kinds {
			info := k.Info()
			if info.Operator != "" && info.Operator != so.name {
				continue
			}
			cases, ok := so.cases[info.Name]
			if !ok {
				t.Errorf("kind %s has no search case on %s: add one to searchOperators (the kind gets the whole search from it)", info.Name, so.name)
				continue
			}
			for _, sc := range cases {
				s := exploreCase(t, so, info.Name, sc, filter)
				report = append(report, fmt.Sprintf("%s/%s (%s): %d states, %d dead ends, %d data-loss paths, %d with marks left", so.name, info.Name, sc.name, s.states, s.deadEnds, s.dataLoss, s.marks))
			}
		}
	}
	sort.Strings(report)
	t.Logf("kind search in %s:\n%s", time.Since(start).Round(time.Millisecond), strings.Join(report, "\n"))
	fmt.Printf("kind search: %s\n", strings.Join(report, "; "))
}

// searchStats counts a case's states and what was wrong at their ends.
type searchStats struct{ states, deadEnds, dataLoss, marks int }

// exploreCase runs one case's reference run, then every state of it.
func exploreCase(t *testing.T, so searchOperator, kind string, sc searchCase, filter *regexp.Regexp) searchStats {
	t.Helper()
	var st searchStats
	prefix := fmt.Sprintf("%s/%s/%s", so.name, kind, sc.name)
	if f := *kindSearchCase; filter != nil && strings.Contains(f, "/") && !strings.Contains(f, so.name+"/"+kind) && !filter.MatchString(prefix) {
		return st // no state of the case can match
	}
	ref := world.New(t, sc.opts)
	if sc.setup != nil {
		sc.setup(t, ref)
	}
	if _, stderr, code, _ := searchRun(ref, 0, sc.args); code != 0 {
		t.Fatalf("%s: reference run: exit %d\n%s", prefix, code, stderr)
	}
	if so.settle != nil {
		so.settle(ref)
	}
	if p := append(ref.DeadEnd(so.deployment), ref.MarksLeft(so.deployment, nil)...); len(p) > 0 {
		t.Fatalf("%s: the reference run does not end consistent: %s", prefix, strings.Join(p, "; "))
	}
	effects := ref.SideEffects()
	for k := 1; k <= effects; k++ {
		for _, d := range append([]world.Change{{Name: "crash"}}, so.disturbances...) {
			label := fmt.Sprintf("%s/%s@%d", prefix, d.Name, k)
			if (filter != nil && !filter.MatchString(label)) || (*kindSearchSkip != "" && regexp.MustCompile(*kindSearchSkip).MatchString(label)) {
				continue
			}
			w := world.New(t, sc.opts)
			if sc.setup != nil {
				sc.setup(t, w)
			}
			before := w.Limits()
			crashAt := 0
			if d.Name == "crash" {
				crashAt = k
			} else {
				w.ChangeAfter(k, d)
			}
			_, stderr, _, _ := searchRun(w, crashAt, sc.args)
			if d.Name != "crash" {
				if _, made := w.ChangeMade(); !made {
					w.PutBack()
					continue // the disturbance does not fit the world at k
				}
				w.PutBack()
			}
			st.states++
			log, deadEnd, marks := searchRecover(w, so, sc, before)
			loss := w.Violations()
			if len(deadEnd) > 0 {
				st.deadEnds++
			}
			if len(loss) > 0 {
				st.dataLoss++
			}
			if len(marks) > 0 {
				st.marks++
			}
			if len(deadEnd)+len(marks) > 0 {
				t.Errorf("%s: no way forward: %s\nthe command:\n%s\nthe recovery:\n%s", label, strings.Join(append(deadEnd, marks...), "; "), stderr, log)
			}
		}
	}
	return st
}

// searchRun is the command as the composed build runs it (main.go's operators).
func searchRun(w *world.World, crashAt int, args []string) (stdout, stderr string, code int, crashed bool) {
	return runOperators(context.Background(), w, drivenBuild, w, crashAt, nil, args...)
}

// searchRecover runs what an SRE would, five commands at the most: resume while a
// record is left or the cluster is gone (abort when resume stops, abort --grow-back when
// abort offers it, the repair a run names), the command again when no record is left
// but the world is not at a consistent end. It
// returns what the commands printed, what keeps the world from a consistent end, and
// the marks left.
func searchRecover(w *world.World, so searchOperator, sc searchCase, before map[string]sim.Throughputs) (string, []string, []string) {
	var log strings.Builder
	resume := append([]string{"resume", so.cluster, "-n", "cassandra", "--yes"}, searchFlags...)
	abort := append([]string{"abort", so.cluster, "-n", "cassandra", "--yes"}, searchFlags...)
	growBack := append(slices.Clone(abort), "--grow-back")
	repair := append([]string{"repair-operator-state", so.cluster, "-n", "cassandra", "--yes"}, searchFlags...)
	state := func() ([]string, []string) {
		if so.settle != nil {
			so.settle(w)
		}
		return w.DeadEnd(so.deployment), w.MarksLeft(so.deployment, before)
	}
	for i := 0; i < 5; i++ {
		dead, marks := state()
		if len(dead)+len(marks) == 0 {
			break
		}
		args := resume
		if !w.RecordLeft() && w.ClusterExists() {
			args = sc.again
		}
		_, stderr, code, _ := searchRun(w, 0, args)
		fmt.Fprintf(&log, "$ %s -> %d\n%s", strings.Join(args, " "), code, stderr)
		if code != 0 && strings.Contains(stderr, "kubectl cassandra repair-operator-state") {
			// The run names the operator's stuck state and its repair: the SRE runs it.
			_, stderr, code, _ = searchRun(w, 0, repair)
			fmt.Fprintf(&log, "$ repair-operator-state -> %d\n%s", code, stderr)
			continue
		}
		if code != 0 && args[0] == "resume" {
			_, stderr, code, _ = searchRun(w, 0, abort)
			fmt.Fprintf(&log, "$ abort -> %d\n%s", code, stderr)
			if code != 0 && strings.Contains(stderr, "--grow-back") {
				_, stderr, code, _ = searchRun(w, 0, growBack)
				fmt.Fprintf(&log, "$ abort --grow-back -> %d\n%s", code, stderr)
			}
		}
	}
	dead, marks := state()
	return log.String(), dead, marks
}
