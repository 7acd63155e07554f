package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// binDir holds the binary built once for all tests, installed as `nodetool` and `cqlsh`
// like the e2e harness does.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "nodetool-sim-test")
	if err != nil {
		panic(err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		// `go test` may run with a PATH that lacks the toolchain; use the one testing us.
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.Command(goTool, "build", "-o", filepath.Join(dir, "nodetool"), ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		_ = os.RemoveAll(dir)
		panic("building nodetool-sim: " + err.Error())
	}
	if err := copyFile(filepath.Join(dir, "nodetool"), filepath.Join(dir, "cqlsh")); err != nil {
		_ = os.RemoveAll(dir)
		panic("installing cqlsh: " + err.Error())
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

func nodes() []sim.NodeSpec {
	return []sim.NodeSpec{
		{Pod: "r1-0", Address: "10.244.1.12", HostID: "2f1b8c5e-6a0e-4b0e-9c57-0d3b1f6a7e11", DC: "dc1", Rack: "r1", Load: "1.2 GiB"},
		{Pod: "r2-0", Address: "10.244.2.17", HostID: "9a4d2c71-3b8e-4f2a-a1d0-5e6f7a8b9c02", DC: "dc1", Rack: "r2", Load: "1.16 GiB"},
		{Pod: "r3-0", Address: "10.244.3.9", HostID: "c3e5f7a9-1b2d-4e6f-8a0b-1c2d3e4f5a63", DC: "dc1", Rack: "r3", Load: "1.24 GiB"},
		{Pod: "r1-1", Address: "10.244.1.13", HostID: "4b6d8f0a-2c4e-4a6b-9c8d-0e1f2a3b4c74", DC: "dc1", Rack: "r1", Load: "1.22 GiB"},
		{Pod: "r2-1", Address: "10.244.2.18", HostID: "e7f9a1b3-5c7d-4e9f-8a1b-2c3d4e5f6a85", DC: "dc1", Rack: "r2", Load: "1.18 GiB"},
		{Pod: "r3-1", Address: "10.244.3.10", HostID: "0d2f4a6c-8e0a-4c2e-b4d6-3f5a7b9c1d96", DC: "dc1", Rack: "r3", Load: "1.21 GiB"},
	}
}

func newCluster(t *testing.T, o sim.Options) (string, *sim.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.json")
	s, err := sim.Create(path, o, nodes())
	require.NoError(t, err)
	return path, s
}

// nodetool builds the command exactly as the plugin runs it in the pod.
func nodetool(state, pod string, args ...string) *exec.Cmd {
	full := append([]string{"LANG=C", "JAVA_TOOL_OPTIONS=-Dcom.sun.jndi.rmiURLParsing=legacy", "nodetool"}, args...)
	cmd := exec.Command("env", full...)
	cmd.Env = []string{"PATH=" + binDir + ":/usr/bin:/bin", EnvState + "=" + state, EnvPod + "=" + pod}
	return cmd
}

type out struct {
	stdout, stderr string
	code           int
}

func runTool(t *testing.T, state, pod string, args ...string) out {
	t.Helper()
	cmd := nodetool(state, pod, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out{o.String(), e.String(), code}
}

// eventually polls cond with a deadline (the subprocesses run on the real clock).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func nodeView(t *testing.T, state, pod string) sim.NodeView {
	t.Helper()
	v, err := sim.Open(state).Node(pod)
	require.NoError(t, err)
	return v
}

func TestMissingEnv(t *testing.T) {
	cmd := exec.Command(filepath.Join(binDir, "nodetool"), "status")
	cmd.Env = []string{}
	var e bytes.Buffer
	cmd.Stderr = &e
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 1, ee.ExitCode())
	require.Contains(t, e.String(), "NODETOOL_SIM_STATE and POD_NAME must be set")
}

func TestStatusAndErrors(t *testing.T) {
	state, s := newCluster(t, sim.Options{Version: sim.V41})
	want, err := os.ReadFile("../sim/testdata/status_4.x_steady.txt")
	require.NoError(t, err)
	require.Equal(t, out{string(want), "", 0}, runTool(t, state, "r1-0", "status"))
	require.Equal(t, out{"ReleaseVersion: 4.1.6\n", "", 0}, runTool(t, state, "r1-0", "-h", "127.0.0.1", "version"))

	require.NoError(t, s.SetFault("r3-0", sim.Fault{Down: true}))
	require.Equal(t, out{"", "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'.\n", 1},
		runTool(t, state, "r3-0", "netstats"))
	require.Contains(t, runTool(t, state, "r1-0", "status").stdout, "\nDN  10.244.3.9   ?  ")
	require.Equal(t, 1, runTool(t, state, "r1-0", "bogus").code)
}

func TestDecommissionObservedByPoller(t *testing.T) {
	state, _ := newCluster(t, sim.Options{Version: sim.V40, DecommissionTime: time.Second})
	cmd := nodetool(state, "r3-1", "decommission")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// Another process polls netstats on the node, as the plugin does, once the call
	// has reached the node.
	eventually(t, "decommission started", func() bool { return nodeView(t, state, "r3-1").Decommissioning })
	var modes []string
	eventually(t, "DECOMMISSIONED", func() bool {
		r := runTool(t, state, "r3-1", "netstats")
		require.Equal(t, 0, r.code, r.stderr)
		mode, _, _ := strings.Cut(r.stdout, "\n")
		if len(modes) == 0 || modes[len(modes)-1] != mode {
			modes = append(modes, mode)
		}
		return mode == "Mode: DECOMMISSIONED"
	})
	require.Contains(t, modes, "Mode: LEAVING")
	require.Equal(t, "Mode: DECOMMISSIONED", modes[len(modes)-1])
	require.NotContains(t, modes, "Mode: NORMAL")

	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("decommission did not return")
	}
	require.Empty(t, o.String())
	require.Empty(t, e.String())
	require.NotContains(t, runTool(t, state, "r1-0", "status").stdout, "10.244.3.10")
}

func TestKilledClientDecommissionContinues(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			state, _ := newCluster(t, sim.Options{Version: sim.V50, DecommissionTime: time.Second})
			cmd := nodetool(state, "r3-1", "decommission")
			// Signal nodetool itself, not env: exec replaces env with nodetool in place.
			require.NoError(t, cmd.Start())
			eventually(t, "decommission started", func() bool { return nodeView(t, state, "r3-1").Decommissioning })
			require.NoError(t, cmd.Process.Signal(sig))
			err := cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			if sig == syscall.SIGTERM {
				require.Equal(t, 143, ee.ExitCode())
			} else {
				require.False(t, ee.Exited(), "killed by the signal")
			}
			v := nodeView(t, state, "r3-1")
			require.True(t, v.Decommissioning, "still running without its client")
			require.Equal(t, "This node is still decommissioning.\n", runTool(t, state, "r3-1", "decommission").stdout)
			eventually(t, "DECOMMISSIONED without the client", func() bool {
				return nodeView(t, state, "r3-1").Mode == sim.ModeDecommissioned
			})
			v = nodeView(t, state, "r3-1")
			require.Equal(t, "", v.PeerCode)
			require.Equal(t, 1, v.DecommissionsStarted)
			require.Equal(t, 2, v.DecommissionCalls)
		})
	}
}

func TestConcurrentStatusDuringDecommission(t *testing.T) {
	state, _ := newCluster(t, sim.Options{Version: sim.V311, DecommissionTime: time.Second})
	dec := nodetool(state, "r3-1", "decommission")
	require.NoError(t, dec.Start())
	eventually(t, "decommission started", func() bool { return nodeView(t, state, "r3-1").Decommissioning })

	var wg sync.WaitGroup
	results := make([]out, 20)
	pods := []string{"r1-0", "r2-0", "r3-0", "r1-1", "r2-1", "r3-1"}
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = runTool(t, state, pods[i%len(pods)], "status")
		}(i)
	}
	wg.Wait()
	for i, r := range results {
		require.Equalf(t, 0, r.code, "call %d: %s", i, r.stderr)
		require.Emptyf(t, r.stderr, "call %d", i)
		require.Truef(t, strings.HasPrefix(r.stdout, "Datacenter: dc1\n===============\n"), "call %d: %q", i, r.stdout)
		require.Truef(t, strings.HasSuffix(r.stdout, "  r1\n\n") || strings.HasSuffix(r.stdout, "  r2\n\n") || strings.HasSuffix(r.stdout, "  r3\n\n"), "call %d: %q", i, r.stdout)
	}
	require.NoError(t, dec.Wait())
	eventually(t, "DECOMMISSIONED", func() bool { return nodeView(t, state, "r3-1").Mode == sim.ModeDecommissioned })
	b, err := os.ReadFile(state)
	require.NoError(t, err)
	require.True(t, json.Valid(b), "state file stays valid JSON")
}

// TestStreamThroughputAcrossProcesses: a setting made by one nodetool process is the
// node's, read by the next (the state file), and only that node's.
func TestStreamThroughputAcrossProcesses(t *testing.T) {
	state, _ := newCluster(t, sim.Options{Version: sim.V41})
	require.Equal(t, out{"", "", 0}, runTool(t, state, "r1-0", "setstreamthroughput", "-m", "100"))
	require.Equal(t, out{"Current stream throughput: 100.0 MiB/s\n", "", 0}, runTool(t, state, "r1-0", "getstreamthroughput", "-m"))
	require.Equal(t, out{"Current stream throughput: 24.0 MiB/s\n", "", 0}, runTool(t, state, "r2-0", "getstreamthroughput", "-m"))
}

// TestExecCostEnv: NODETOOL_SIM_EXEC_COST charges and counts each invocation; a bad
// value is refused before anything runs.
func TestExecCostEnv(t *testing.T) {
	state, _ := newCluster(t, sim.Options{Version: sim.V40})
	withCost := func(cost string, args ...string) out {
		cmd := nodetool(state, "r1-0", args...)
		cmd.Env = append(cmd.Env, EnvExecCost+"="+cost)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return out{o.String(), e.String(), code}
	}
	require.Equal(t, 0, withCost("1ns", "version").code)
	require.Equal(t, 0, withCost("1ns", "status").code)
	require.Equal(t, 2, nodeView(t, state, "r1-0").Execs)
	require.Equal(t, 0, runTool(t, state, "r1-0", "version").code)
	require.Equal(t, 2, nodeView(t, state, "r1-0").Execs, "free calls are not counted")
	require.Equal(t, out{"", "nodetool-sim: NODETOOL_SIM_EXEC_COST=\"soon\" is not a duration >= 0\n", 1}, withCost("soon", "version"))
}

// TestReplacementAcrossProcesses: a replacement started in the state file (a pod on a
// fresh volume with -Dcassandra.replace_address_first_boot) progresses by the clock for
// every nodetool process: the dead node's DN row, then the replacement UJ, then UN
// with the dead node's token count; its container log is in the file too.
func TestReplacementAcrossProcesses(t *testing.T) {
	state, s := newCluster(t, sim.Options{Version: sim.V40, JoinTime: 1200 * time.Millisecond})
	require.NoError(t, s.SetFault("r3-1", sim.Fault{Down: true}))
	require.NoError(t, s.StartFresh(sim.NodeSpec{Pod: "r3-1", Address: "10.244.3.11", DC: "dc1", Rack: "r3"}, sim.Fault{},
		sim.StartOptions{ReplaceAddress: "10.244.3.10", FirstBoot: true}))
	require.Contains(t, runTool(t, state, "r1-0", "status").stdout, "\nDN  10.244.3.10  ?  ")
	var codes []string
	eventually(t, "UN", func() bool {
		st := runTool(t, state, "r1-0", "status").stdout
		for _, l := range strings.Split(st, "\n") {
			if strings.Contains(l, "10.244.3.11") {
				if len(codes) == 0 || codes[len(codes)-1] != l[:2] {
					codes = append(codes, l[:2])
				}
				return l[:2] == "UN"
			}
		}
		return false
	})
	require.Equal(t, []string{"UJ", "UN"}, codes[len(codes)-2:])
	st := runTool(t, state, "r2-0", "status").stdout
	require.NotContains(t, st, "10.244.3.10")
	require.Contains(t, st, "\nUN  10.244.3.11  1.21 GiB  16  ")
	l, err := sim.Open(state).Log("r3-1")
	require.NoError(t, err)
	require.Contains(t, strings.Join(l, "\n"), " - Gathering node replacement information for /10.244.3.10:7000\n")
}

// TestRemoveNodeAcrossProcesses: `nodetool removenode` blocks in its process while others
// see the node DL on the coordinator; killing the client does not stop the removal.
func TestRemoveNodeAcrossProcesses(t *testing.T) {
	state, s := newCluster(t, sim.Options{Version: sim.V41, DecommissionTime: 1500 * time.Millisecond})
	require.NoError(t, s.SetFault("r3-1", sim.Fault{Down: true}))
	cmd := nodetool(state, "r1-0", "removenode", "0d2f4a6c-8e0a-4c2e-b4d6-3f5a7b9c1d96")
	require.NoError(t, cmd.Start())
	eventually(t, "removal started", func() bool {
		return strings.Contains(runTool(t, state, "r1-0", "status").stdout, "\nDL  10.244.3.10  ")
	})
	require.Contains(t, runTool(t, state, "r1-0", "removenode", "status").stdout, "RemovalStatus: Removing token (")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	var ee *exec.ExitError
	require.ErrorAs(t, cmd.Wait(), &ee)
	require.Equal(t, 143, ee.ExitCode())
	eventually(t, "removed without its client", func() bool {
		return !strings.Contains(runTool(t, state, "r2-0", "status").stdout, "10.244.3.10")
	})
	require.Equal(t, out{"RemovalStatus: No token removals in process.\n", "", 0}, runTool(t, state, "r1-0", "removenode", "status"))
}

// TestCqlsh: the binary run as `cqlsh` is the simulated cqlsh; the cqlshrc named
// /dev/stdin is read from its standard input, and an ALTER persists in the state file.
func TestCqlsh(t *testing.T) {
	state, _ := newCluster(t, sim.Options{Version: sim.V41, CQLAuth: &sim.JMXAuth{Username: "admin", Password: "pw"}})
	cqlsh := func(stdin string, args ...string) out {
		cmd := exec.Command("env", append([]string{"cqlsh"}, args...)...)
		cmd.Env = []string{"PATH=" + binDir + ":/usr/bin:/bin", EnvState + "=" + state, EnvPod + "=r1-0"}
		cmd.Stdin = strings.NewReader(stdin)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return out{o.String(), e.String(), code}
	}
	rc := "[authentication]\nusername = admin\npassword = pw\n"
	r := cqlsh(rc, "--cqlshrc", sim.StdinPath, "10.244.1.12", "-e", "ALTER KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '2'}")
	require.Equal(t, out{"", "", 0}, r)
	r = cqlsh(rc, "--cqlshrc", sim.StdinPath, "10.244.1.12", "-e", "DESCRIBE KEYSPACE app")
	require.Equal(t, out{"\nCREATE KEYSPACE app WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '2'}  AND durable_writes = true;\n", "", 0}, r)
	r = cqlsh("", "--cqlshrc", sim.StdinPath, "10.244.1.12", "-e", "DESCRIBE KEYSPACE app")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "AuthenticationFailed('Remote end requires authentication')")
	// nodetool in the same pod sees the new replication.
	require.Contains(t, runTool(t, state, "r1-0", "describecluster").stdout, "\tapp -> Replication class: NetworkTopologyStrategy {dc1=2}\n")
}

// TestRebuildAcrossProcesses: `rebuild -- <dc>` blocks in its process while another
// sees the Rebuild plan and is refused; the ranges it fetched persist in the state
// file, so a second rebuild streams nothing.
func TestRebuildAcrossProcesses(t *testing.T) {
	state, _ := newCluster(t, sim.Options{Version: sim.V41, RebuildTime: 1500 * time.Millisecond})
	cmd := nodetool(state, "r1-0", "rebuild", "--", "dc1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	require.NoError(t, cmd.Start())
	eventually(t, "rebuild streaming", func() bool {
		return strings.Contains(runTool(t, state, "r1-0", "netstats").stdout, "\nRebuild ")
	})
	require.Equal(t, out{"nodetool: Node is still rebuilding. Check nodetool netstats.\nSee 'nodetool help' or 'nodetool help <command>'.\n", "", 1},
		runTool(t, state, "r1-0", "rebuild", "dc1"))
	require.NoError(t, cmd.Wait())
	require.Equal(t, "", o.String()+e.String())
	require.Equal(t, out{"", "", 0}, runTool(t, state, "r1-0", "rebuild", "dc1"))
	v := nodeView(t, state, "r1-0")
	require.Equal(t, 2, v.RebuildsStarted)
	require.False(t, v.Rebuilding)
}
