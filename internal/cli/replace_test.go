package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

const deadPod = "demo-dc1-rack1-2"

// replaceWorld is a 3-node CassKop rack whose node of deadPod is dead (its JVM down, its
// pod not Ready), the operator running.
func replaceWorld(t *testing.T, version string) (*world.World, string, int) {
	w := world.New(t, world.Opts{Nodes: 3, RF: 3, Version: version, Operator: true, JoinTime: 20 * time.Millisecond, StartTime: 5 * time.Millisecond})
	d := w.KillNode(deadPod)
	w.ExpectReplace(deadPod)
	return w, d.HostID, len(d.Tokens)
}

// replaceHistory is a replace's side effects: the dead node's claim and pod deleted
// once each, the operator paused and restored once, no nodetool command that acts.
func replaceHistory() world.Expect {
	return world.Expect{Execs: map[string]int{}, ExecKinds: []string{"decommission", "drain", "cleanup", "removenode"},
		PVCDeletes: []string{"data-" + deadPod}, PodDeletes: []string{deadPod}, Operator: map[string][]int32{"casskop": {1, 0, 1}}}
}

// replacedProblems lists what is wrong with a replace's end: the pod's node a new one
// (or the dead one's Host ID on its own address) that is UN with the dead node's tokens,
// the dead Host ID gone, no replace option left, no checkpoint.
func replacedProblems(w *world.World, d world.DeadNode) []string {
	var p []string
	n, err := w.Cass.Node(d.Pod)
	if err != nil {
		return []string{err.Error()}
	}
	if n.PeerCode != "UN" || n.Tokens != len(d.Tokens) || (n.HostID == d.HostID && n.Address != d.Address) {
		p = append(p, fmt.Sprintf("the node of %s is %s %s with %d tokens; want a replacement of %s, UN, %d tokens", d.Pod, n.HostID, n.PeerCode, n.Tokens, d.HostID, len(d.Tokens)))
	}
	if n.HostID != d.HostID {
		if e, ok := w.Endpoint(d.HostID); ok {
			p = append(p, fmt.Sprintf("the dead Host ID %s is still known to its peers (%s)", d.HostID, e.PeerCode))
		}
	}
	if s, ok := w.ConfigMap(); ok && strings.Contains(s, "replace_address") {
		p = append(p, "the start script still holds a replace option")
	}
	if w.HasCheckpoint() {
		p = append(p, "a checkpoint is left")
	}
	return p
}

// assertReplaced: the pod's node is a new one (another Host ID) that is UN with the dead
// node's tokens, the dead Host ID is gone from every node's view, the start script holds
// no replace option, no checkpoint is left.
func assertReplaced(t *testing.T, w *world.World, deadID string, tokens int, label string) {
	t.Helper()
	n, err := w.Cass.Node(deadPod)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	if n.HostID == deadID || n.PeerCode != "UN" || n.Tokens != tokens {
		t.Errorf("%s: the node of %s is %s %s with %d tokens; want a new Host ID, UN, %d tokens", label, deadPod, n.HostID, n.PeerCode, n.Tokens, tokens)
	}
	if e, ok := w.Endpoint(deadID); ok {
		t.Errorf("%s: the dead Host ID %s is still known to its peers (%s)", label, deadID, e.PeerCode)
	}
	if s, ok := w.ConfigMap(); ok && strings.Contains(s, "replace_address") {
		t.Errorf("%s: the start script still holds a replace option:\n%s", label, s)
	}
	if w.HasCheckpoint() {
		t.Errorf("%s: a checkpoint is left", label)
	}
	if v := w.Violations(); len(v) > 0 {
		t.Errorf("%s: unsafe actions: %s", label, strings.Join(v, "; "))
	}
}

func TestReplaceNodeReplacesTheDeadNode(t *testing.T) {
	for _, version := range []string{"4.1", "3.11"} {
		t.Run(version, func(t *testing.T) {
			w, deadID, tokens := replaceWorld(t, version)
			stdout, stderr, code, _ := run(w, 0, "replace-node", "demo", "-n", "cassandra", "--pod", deadPod, "--yes")
			t.Logf("%s\n%s", stdout, stderr)
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			assertReplaced(t, w, deadID, tokens, "replace-node")
			w.AssertHistory(replaceHistory(), "replace-node")
			if got := configMapWrites(w); got != 2 {
				t.Errorf("the ConfigMap was written %d times, want 2 (the option in, then out)", got)
			}
		})
	}
}

func TestReplaceNodeDryRunChangesNothing(t *testing.T) {
	w, _, _ := replaceWorld(t, "4.1")
	stdout, stderr, code, _ := run(w, 0, "replace-node", "demo", "-n", "cassandra", "--pod", deadPod, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"dead node: pod " + deadPod, "replace_address_first_boot", "jvm-server.options", "data-" + deadPod, "exits 0"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the plan does not say %q:\n%s", want, stdout)
		}
	}
	if h := w.History(); len(h) != 0 {
		t.Errorf("--dry-run changed the world: %v", h)
	}
}

// TestReplaceNodeRefusals: exit 3 and nothing changed for a node that is UN, a ring that
// changes, a seed.
func TestReplaceNodeRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		setup      func(w *world.World)
		args       []string
	}{
		{"node UN", "not DN", func(w *world.World) {}, nil},
		{"ring changing", "joins, leaves or moves", func(w *world.World) {
			w.KillNode(deadPod)
			w.AddJoiningNode("other", "dc1")
		}, nil},
		{"another node down", "every other node must be UN", func(w *world.World) {
			w.KillNode(deadPod)
			w.SetDown("demo-dc1-rack1-1", true)
		}, nil},
		{"a seed", "is a seed", func(w *world.World) {
			w.KillNode(deadPod)
			w.SetSeedlist("demo-dc1-rack1-0", deadPod)
		}, nil},
		{"no such pod", "no pod of cluster", func(w *world.World) { w.KillNode(deadPod) }, []string{"--pod", "demo-dc1-rack1-7x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := world.New(t, world.Opts{Nodes: 3, Version: "4.1", Operator: true, JoinTime: 20 * time.Millisecond})
			tc.setup(w)
			args := []string{"replace-node", "demo", "-n", "cassandra", "--yes"}
			if tc.args == nil {
				args = append(args, "--pod", deadPod)
			} else {
				args = append(args, tc.args...)
			}
			_, stderr, code, _ := run(w, 0, args...)
			if code != operation.ExitRefused && code != exit.Usage {
				t.Fatalf("exit %d, want a refusal\n%s", code, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("the refusal does not say %q:\n%s", tc.want, stderr)
			}
			for _, ev := range w.History() {
				t.Errorf("something changed: %s", ev)
			}
		})
	}
}

// TestReplaceNodeCrashMatrix kills replace-node right after every side effect, in turn,
// then resumes twice (the first resume crashes too): every case ends replaced, each
// claim and pod deleted once, the operator paused and restored once.
func TestReplaceNodeCrashMatrix(t *testing.T) {
	args := []string{"replace-node", "demo", "-n", "cassandra", "--pod", deadPod, "--yes"}
	ref, deadID, tokens := replaceWorld(t, "4.1")
	if _, stderr, code, crashed := run(ref, 0, args...); code != 0 || crashed {
		t.Fatalf("reference run: code %d crashed %v\n%s", code, crashed, stderr)
	}
	assertReplaced(t, ref, deadID, tokens, "reference")
	points := ref.SideEffects()
	for k := 1; k <= points; k++ {
		w, deadID, tokens := replaceWorld(t, "4.1")
		crashAndResume(t, w, k, args)
		label := fmt.Sprintf("crash after side effect %d", k)
		assertReplaced(t, w, deadID, tokens, label)
		w.AssertHistory(replaceHistory(), label)
	}
	t.Logf("replace-node: %d crash points, each followed by a crashed and a clean resume", points)
}

// TestReplaceNodeAbortBeforeTheClaims: a run killed once the option is written is
// aborted: the option goes, the operator comes back, the dead node's data stays.
func TestReplaceNodeAbortBeforeTheClaims(t *testing.T) {
	w, _, _ := replaceWorld(t, "4.1")
	// Side effects: pause (deployment), checkpoint writes, the ConfigMap write.
	for k := 1; k <= 8; k++ {
		w, _, _ = replaceWorld(t, "4.1")
		if _, _, _, crashed := run(w, k, "replace-node", "demo", "-n", "cassandra", "--pod", deadPod, "--yes"); !crashed {
			t.Fatal("the run was not killed")
		}
		if s, _ := w.ConfigMap(); strings.Contains(s, "replace_address") {
			break
		}
	}
	_, stderr, code, _ := run(w, 0, "abort", "demo", "-n", "cassandra", "--yes")
	if code != 0 {
		t.Fatalf("abort exited %d\n%s", code, stderr)
	}
	if s, _ := w.ConfigMap(); strings.Contains(s, "replace_address") {
		t.Errorf("abort left the replace option:\n%s", s)
	}
	if w.DeploymentReplicas("casskop") != 1 {
		t.Error("abort did not restore the operator")
	}
	for _, ev := range w.History() {
		if ev.Verb == "delete" && (ev.Resource == "persistentvolumeclaims" || ev.Resource == "pods") {
			t.Errorf("abort before the claims deleted %s", ev)
		}
	}
}

// TestReplaceNodeAbortRefusedOnceTheDataIsGone: past the claims, abort refuses and names
// resume, which finishes the replace.
func TestReplaceNodeAbortRefusedOnceTheDataIsGone(t *testing.T) {
	w, deadID, tokens := replaceWorld(t, "4.1")
	_, _, _ = runUntilStderr(w, "delete pod "+deadPod, "replace-node", "demo", "-n", "cassandra", "--pod", deadPod, "--yes")
	_, stderr, code, _ := run(w, 0, "abort", "demo", "-n", "cassandra", "--yes")
	if code != operation.ExitRefused || !strings.Contains(stderr, "resume") {
		t.Fatalf("abort past the claims: exit %d, want 3 naming resume\n%s", code, stderr)
	}
	if _, stderr, code, _ := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 {
		t.Fatalf("resume exited %d\n%s", code, stderr)
	}
	assertReplaced(t, w, deadID, tokens, "resumed")
}

// TestReplaceNodeAbortRefusedRightAfterTheClaimsDelete: the claims' deletion is
// evident (its start is not written before it acts), so a run killed right after it
// leaves the step pending in the checkpoint; abort reads the claims, refuses, and
// resume finishes the replace.
func TestReplaceNodeAbortRefusedRightAfterTheClaimsDelete(t *testing.T) {
	args := []string{"replace-node", "demo", "-n", "cassandra", "--pod", deadPod, "--yes"}
	for k := 1; ; k++ {
		if k > 20 {
			t.Fatal("no crash point leaves the claims deleted and the step pending")
		}
		w, deadID, tokens := replaceWorld(t, "4.1")
		if _, _, _, crashed := run(w, k, args...); !crashed {
			t.Fatal("the run was not killed")
		}
		cp := loadCP(t, w)
		if len(deletesOf(w)) == 0 || cp == nil || stepOf(t, cp, "delete-dead-claims/"+deadPod).State != "pending" {
			continue
		}
		_, stderr, code, _ := run(w, 0, "abort", "demo", "-n", "cassandra", "--yes")
		if code != operation.ExitRefused || !strings.Contains(stderr, "resume") {
			t.Fatalf("abort after the claims' delete (k=%d): exit %d, want 3 naming resume\n%s", k, code, stderr)
		}
		if _, stderr, code, _ := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 {
			t.Fatalf("resume exited %d\n%s", code, stderr)
		}
		assertReplaced(t, w, deadID, tokens, "resumed")
		return
	}
}

// TestReplaceNodeAbortWhenTheNodeCameBack: the claims are being deleted when the node
// comes back on them (its pod kept them, replace_address_first_boot is ignored by a
// bootstrapped node). Resume must never replace it; abort is the way out: it ends
// consistent, the operator restored, the option gone, nothing deleted, and warns that
// the claims go with the pod.
func TestReplaceNodeAbortWhenTheNodeCameBack(t *testing.T) {
	var w *world.World
	var deadID string
	for k := 1; ; k++ {
		if k > 20 {
			t.Fatal("no crash point leaves the claim being deleted")
		}
		w, deadID, _ = replaceWorld(t, "4.1")
		if _, _, _, crashed := run(w, k, "replace-node", "demo", "-n", "cassandra", "--pod", deadPod, "--yes"); !crashed {
			t.Fatal("the run was not killed")
		}
		c, err := w.Kube.CoreV1().PersistentVolumeClaims("cassandra").Get(context.Background(), "data-"+deadPod, metav1.GetOptions{})
		if err == nil && c.DeletionTimestamp != nil {
			break
		}
	}
	w.ReviveNode(deadPod)
	if _, stderr, code, _ := run(w, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != operation.ExitRefused || !strings.Contains(stderr, "abort") {
		t.Fatalf("resume with the node back: exit %d, want 3 naming abort\n%s", code, stderr)
	}
	deletes := len(deletesOf(w))
	stdout, stderr, code, _ := run(w, 0, "abort", "demo", "-n", "cassandra", "--yes")
	if code != 0 {
		t.Fatalf("abort with the node back on dying claims exited %d\n%s", code, stderr)
	}
	if out := stdout + stderr; !strings.Contains(out, "WARNING") || !strings.Contains(out, "claims being deleted") {
		t.Errorf("abort did not warn that the claims go with the pod:\n%s", out)
	}
	if got := deletesOf(w); len(got) != deletes {
		t.Errorf("resume or abort deleted something: %v", got[deletes:])
	}
	if p := w.ConsistentProblems(); len(p) > 0 {
		t.Errorf("abort left: %v", p)
	}
	if s, _ := w.ConfigMap(); strings.Contains(s, "replace_address") {
		t.Error("abort left the replace option")
	}
	if n, err := w.Cass.Node(deadPod); err != nil || n.HostID != deadID || n.PeerCode != "UN" {
		t.Errorf("the node that came back: %+v %v, want %s UN", n, err, deadID)
	}
}

// deletesOf lists the plugin's deletes of pods and claims, in order.
func deletesOf(w *world.World) []string {
	var out []string
	for _, ev := range w.History() {
		if ev.Verb == "delete" && (ev.Resource == "persistentvolumeclaims" || ev.Resource == "pods") {
			out = append(out, ev.String())
		}
	}
	return out
}

// TestReplaceNodeReportsTheStartupError: a replacement whose Cassandra cannot start
// (auto_bootstrap: false, R3) exits 3 and restarts in a loop; the run stops with
// Cassandra's own startup line, read from the container's last termination, what state
// things are in and how to go on, after discarding the dead node's data once.
func TestReplaceNodeReportsTheStartupError(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, RF: 3, Version: "4.1", Operator: true, NoAutoBootstrap: []string{deadPod}})
	w.KillNode(deadPod)
	w.ExpectReplace(deadPod)
	_, stderr, code, _ := run(w, 0, "replace-node", "demo", "-n", "cassandra", "--pod", deadPod, "--yes", "--poll-interval", "1ms", "--timeout", "5s")
	if code != exit.Error {
		t.Fatalf("replace-node with a replacement that cannot start: exit %d, want %d\n%s", code, exit.Error, stderr)
	}
	for _, want := range []string{"does not start", "Exception (java.lang.RuntimeException) encountered during startup: Replacing a node without bootstrapping",
		"claims and pod were deleted", "resume"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the report does not say %q:\n%s", want, stderr)
		}
	}
	if got := deletesOf(w); len(got) != 2 {
		t.Errorf("deletes %v, want the dead node's claim and pod once each", got)
	}
	if w.DeploymentReplicas("casskop") != 0 {
		t.Error("the operator was restored while the replace is unfinished")
	}
}

// TestReplaceNodeStatusShowsTheStream: status shows a replace in flight with its
// streaming progress (bytes received of the dead node's Load), recorded by the run.
func TestReplaceNodeStatusShowsTheStream(t *testing.T) {
	// The replacement waits JoinTime/6 for gossip, then streams for JoinTime/2 (test/sim).
	w := world.New(t, world.Opts{Nodes: 3, RF: 3, Version: "4.1", Operator: true, JoinTime: 3 * time.Second})
	w.KillNode(deadPod)
	w.ExpectReplace(deadPod)
	marker := "replace " + deadPod + ": "
	_, stderr, _ := runUntilStderr(w, marker, "replace-node", "demo", "-n", "cassandra", "--pod", deadPod, "--yes", "--poll-interval", "1ms", "--progress", "plain")
	if !strings.Contains(stderr, marker) {
		t.Fatalf("the run reported no stream of the replacement:\n%s", stderr)
	}
	stdout, stderr, code, _ := run(w, 0, "status", "demo", "-n", "cassandra")
	if code != 0 || !strings.Contains(stdout, "progress "+marker) || !strings.Contains(stdout, "wait-replaced/"+deadPod) {
		t.Errorf("status of a replace in flight: exit %d, want its step and the stream's progress\n%s%s", code, stdout, stderr)
	}
}

// configMapWrites counts the plugin's writes of ConfigMaps.
func configMapWrites(w *world.World) int {
	n := 0
	for _, ev := range w.History() {
		if ev.Kind == "write" && ev.Resource == "configmaps" {
			n++
		}
	}
	return n
}
