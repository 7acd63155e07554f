package world

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/prerun"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// The CassKop world runs pre_run.sh in every pod's bootstrap init container, really
// (docs/how-it-works/replace.md §7.2), and its Cassandra starts with the JVM options left
// in the file its version reads (§7.3).

const (
	deadPod  = "demo-dc1-rack1-1"
	otherPod = "demo-dc1-rack1-0"
)

// replaceBlock is the block the plugin appends to pre_run.sh (issue 25): it reaches pod
// only and exits 0 on every other pod (§7.3's fix of CassKop's one-liner).
func replaceBlock(pod, ip, file string) string {
	return "#!/bin/sh\n" +
		"# kubectl-cassandra replace-node op-1: begin\n" +
		"if [ \"$(hostname)\" = '" + pod + "' ]; then\n" +
		"  echo '-Dcassandra.replace_address_first_boot=" + ip + "' >> /etc/cassandra/" + file + "\n" +
		"fi\n" +
		"# kubectl-cassandra replace-node op-1: end\n"
}

func needBash(t *testing.T) {
	t.Helper()
	if !prerun.Available() {
		t.Skip(prerun.ErrNoBash)
	}
}

// replaceWorld is three nodes of version v whose replacements take a while (JoinTime),
// so that the UJ phase can be seen.
func replaceWorld(t *testing.T, v string) *World {
	t.Helper()
	needBash(t)
	return New(t, Opts{Version: v, Nodes: 3, JoinTime: 1200 * time.Millisecond})
}

// waitCode waits until peers see pod's node with code; it fails the test after 10 s.
func waitCode(t *testing.T, w *World, pod, code string) sim.NodeView {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		nv, err := w.Cass.Node(pod)
		if err == nil && nv.PeerCode == code {
			return nv
		}
		if time.Now().After(deadline) {
			t.Fatalf("node of %s never %s: %+v %v", pod, code, nv, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPreRunReplaces: the block, writing to the file the version reads (3.11
// jvm.options; 4.1 jvm-server.options, §7.3), makes the pod on fresh claims replace the
// dead node: UJ with a new Host ID, then UN with the dead node's tokens, and the dead
// Host ID gone (§4.3, §4.4, different address).
func TestPreRunReplaces(t *testing.T) {
	for v, file := range map[string]string{sim.V311: "jvm.options", sim.V41: "jvm-server.options"} {
		t.Run(v, func(t *testing.T) {
			w := replaceWorld(t, v)
			dead := w.KillNode(deadPod)
			if w.PodReady(deadPod) || waitCode(t, w, deadPod, "DN").Running {
				t.Fatal("killed node: pod Ready or JVM up")
			}
			w.SetPreRun(replaceBlock(deadPod, dead.Address, file))
			w.WipePod(deadPod)

			nv := waitCode(t, w, deadPod, "UJ")
			if nv.HostID == dead.HostID || nv.Address == dead.Address || nv.Replacing != dead.Address {
				t.Errorf("replacing: %+v, dead %+v", nv, dead)
			}
			nv = waitCode(t, w, deadPod, "UN")
			toks, err := w.Tokens(deadPod)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(toks, dead.Tokens) {
				t.Errorf("the replacement owns %d tokens, not the dead node's %d", len(toks), len(dead.Tokens))
			}
			if e, ok := w.Endpoint(dead.HostID); ok {
				t.Errorf("the dead Host ID is still known: %+v", e)
			}
			if v := w.Violations(); len(v) > 0 || len(w.InitFailures()) > 0 {
				t.Errorf("violations %q, init failures %v", v, w.InitFailures())
			}
			// Every other pod that starts again runs the block as a no-op.
			w.RecreatePod(otherPod)
			if nv, _ := w.Cass.Node(otherPod); nv.PeerCode != "UN" || nv.Restarts != 1 || len(w.InitFailures()) > 0 {
				t.Errorf("%s after a restart: %+v, init failures %v", otherPod, nv, w.InitFailures())
			}
		})
	}
}

// TestPreRunWrongFileBootstrapsNewNode: on 4.1 the same block writing to jvm.options,
// as CassKop's plugin does, is read by nobody: the pod bootstraps as a new node with
// new tokens and the dead node stays DN (§7.3, first point; §4.2 "Without any replace
// flag", new IP).
func TestPreRunWrongFileBootstrapsNewNode(t *testing.T) {
	w := replaceWorld(t, sim.V41)
	dead := w.KillNode(deadPod)
	w.SetPreRun(replaceBlock(deadPod, dead.Address, "jvm.options"))
	w.WipePod(deadPod)

	nv := waitCode(t, w, deadPod, "UN")
	if nv.Replacing != "" || nv.HostID == dead.HostID {
		t.Errorf("new node: %+v", nv)
	}
	toks, err := w.Tokens(deadPod)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks {
		if slices.Contains(dead.Tokens, tok) {
			t.Fatalf("the new node has the dead node's token %s", tok)
		}
	}
	e, ok := w.Endpoint(dead.HostID)
	if !ok || e.PeerCode != "DN" || !e.Detached {
		t.Errorf("the dead node should stay DN, detached: %+v (known %v)", e, ok)
	}
}

// TestCassKopOneLinerFailsOtherPods: CassKop's own script (kubectl-casskop line 258)
// exits 1 on every pod but the one it names, so the bootstrap init container of any
// other pod that starts while it is in place fails (§7.3, second point): that pod is
// never Ready, its Cassandra does not start, and the world reports it.
func TestCassKopOneLinerFailsOtherPods(t *testing.T) {
	w := replaceWorld(t, sim.V311)
	dead := w.KillNode(deadPod)
	w.SetPreRun(`test "$(hostname)" == '` + deadPod + `' && echo -Dcassandra.replace_address_first_boot=` + dead.Address + ` >> /etc/cassandra/jvm.options`)
	w.WipePod(deadPod)
	if nv := waitCode(t, w, deadPod, "UJ"); nv.Replacing != dead.Address {
		t.Errorf("its own pod replaces: %+v", nv)
	}

	w.RecreatePod(otherPod) // an eviction, a rolling restart: any start
	f := w.InitFailures()
	if len(f) != 1 || f[0].Pod != otherPod || f[0].Exit != 1 {
		t.Fatalf("init failures %v, want %s exited 1", f, otherPod)
	}
	if w.PodReady(otherPod) {
		t.Error("the pod whose init container failed is Ready")
	}
	if nv, _ := w.Cass.Node(otherPod); nv.Running || nv.PeerCode != "DN" {
		t.Errorf("its Cassandra runs: %+v", nv)
	}
	want := "init container bootstrap of pod " + otherPod + " exited 1"
	if v := w.Violations(); len(v) != 1 || !strings.HasPrefix(v[0], want) {
		t.Errorf("violations %q, want %q", v, want)
	}
	if s, ok := w.ConfigMap(); !ok || !strings.Contains(s, "replace_address_first_boot") {
		t.Errorf("ConfigMap pre_run.sh %q (present %v)", s, ok)
	}
}

// TestNoConfigMap: Opts.NoConfigMap leaves spec.configMapName unset and no ConfigMap.
func TestNoConfigMap(t *testing.T) {
	w := New(t, Opts{Nodes: 1, NoConfigMap: true})
	if _, ok, _ := unstructuredString(w, "spec", "configMapName"); ok || w.ConfigMapName() != "" {
		t.Error("spec.configMapName set")
	}
	w2 := New(t, Opts{Nodes: 1})
	if name, _, _ := unstructuredString(w2, "spec", "configMapName"); name != "demo-config" {
		t.Errorf("spec.configMapName %q", name)
	}
	if _, ok := w2.ConfigMap(); ok {
		t.Error("pre_run.sh present by default")
	}
}

func unstructuredString(w *World, fields ...string) (string, bool, error) {
	return unstructured.NestedString(w.CR().Object, fields...)
}
