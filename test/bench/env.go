package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
)

// Env is the control plane and the tools one bench run uses.
type Env struct {
	Root      string
	RunDir    string // private temp dir (KTE_DIR, sim state, kubectl cache, plugin on PATH)
	PluginBin string // the plugin binary measured (built like `make build`)
	PluginDir string // dir holding kubectl-cassandra, first on PATH of every kubectl run
	KTE       *fixture.Env
	Clients   *fixture.Clients
	CRD       *fixture.CRDInfo
	Log       func(format string, a ...any)

	// StartTime is how long up.sh took.
	StartTime time.Duration
}

// EnvOptions configures StartEnv.
type EnvOptions struct {
	PluginBin string
	KwokNodes int
	Keep      bool // keep the run dir and control-plane logs after Stop
	Log       func(format string, a ...any)
	Progress  io.Writer // up.sh / down.sh / build.sh output
}

// StartEnv builds the simulated nodetool, starts a private control plane (own KTE_DIR
// and free ports, torn down by up.sh's watchdog if this process dies) and installs the
// CassandraCluster CRD. The returned stop func always tears down what was started.
func StartEnv(ctx context.Context, o EnvOptions) (*Env, func(), error) {
	var undo []func()
	stop := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		undo = nil
	}
	root, err := fixture.RepoRoot()
	if err != nil {
		return nil, stop, err
	}
	e := &Env{Root: root, Log: o.Log}
	binDir, cached, err := fixture.BinDir(ctx, root)
	if err != nil {
		return nil, stop, err
	}
	if !cached {
		e.Log("control-plane binaries are not cached in %s: building them (about 20 min on 2 cores, once)", binDir)
	}
	if binDir, err = fixture.BuildControlPlane(ctx, root, o.Progress); err != nil {
		return nil, stop, err
	}
	runDir, err := os.MkdirTemp("", "kcass-bench-")
	if err != nil {
		return nil, stop, err
	}
	e.RunDir = runDir
	undo = append(undo, func() {
		if o.Keep {
			e.Log("kept %s", runDir)
			return
		}
		_ = os.RemoveAll(runDir)
	})
	execBin := filepath.Join(runDir, "exec-bin")
	e.PluginDir = filepath.Join(runDir, "bin")
	for _, d := range []string{execBin, e.PluginDir, filepath.Join(runDir, "kube-cache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, stop, err
		}
	}
	if e.PluginBin, err = filepath.Abs(o.PluginBin); err != nil {
		return nil, stop, err
	}
	if _, err := os.Stat(e.PluginBin); err != nil {
		return nil, stop, fmt.Errorf("plugin binary: %w (run `make build` first)", err)
	}
	if err := os.Symlink(e.PluginBin, filepath.Join(e.PluginDir, "kubectl-cassandra")); err != nil {
		return nil, stop, err
	}
	t0 := time.Now()
	if err := fixture.GoBuild(ctx, root, "./test/nodetool-sim", filepath.Join(execBin, "nodetool")); err != nil {
		return nil, stop, err
	}
	e.Log("nodetool-sim built in %s", time.Since(t0).Round(time.Millisecond))
	// The cold start's yardsticks, built like the plugin (make build's flags) and put
	// beside it on PATH.
	for name, pkg := range map[string]string{
		NoopPlugin:  "./test/bench/cmd/kcass-noop",
		BarePlugin:  "./test/bench/cmd/kcass-bare-lister",
		ClirtPlugin: "./test/bench/cmd/kcass-cliruntime-lister",
	} {
		if err := buildLikePlugin(ctx, root, pkg, filepath.Join(e.PluginDir, "kubectl-"+name)); err != nil {
			return nil, stop, err
		}
	}

	t0 = time.Now()
	kte, err := fixture.StartEnv(ctx, fixture.EnvOptions{
		Root: root, BinDir: binDir, Dir: filepath.Join(runDir, "kte"), ExecPath: execBin,
		Nodes: o.KwokNodes, Progress: o.Progress, Keep: o.Keep,
	})
	if kte != nil {
		undo = append(undo, func() {
			if err := kte.Stop(); err != nil {
				e.Log("teardown: %v", err)
			}
		})
	}
	if err != nil {
		return nil, stop, err
	}
	e.KTE = kte
	e.StartTime = time.Since(t0)
	e.Log("control plane up in %s (API 127.0.0.1:%d, state in %s)", e.StartTime.Round(100*time.Millisecond), kte.APIPort, kte.Dir)
	if e.Clients, err = fixture.NewClients(kte.Kubeconfig); err != nil {
		return nil, stop, err
	}
	variants := fixture.CRDVariants(root)
	v := variants[len(variants)-1] // the newest CRD (CassKop 2.3 when ../shared is there)
	if e.CRD, err = e.Clients.InstallCRD(ctx, v); err != nil {
		return nil, stop, err
	}
	e.Log("CRD %s installed", v.Name)
	return e, stop, nil
}

// Cmdenv is the environment of every kubectl / plugin process: the test cluster, the
// plugin first on PATH, a private kubectl cache (never the user's ~/.kube/cache).
func (e *Env) Cmdenv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "KUBECONFIG="), strings.HasPrefix(kv, "PATH="), strings.HasPrefix(kv, "KUBECACHEDIR="):
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"KUBECONFIG="+e.KTE.Kubeconfig,
		"PATH="+e.PluginDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECACHEDIR="+filepath.Join(e.RunDir, "kube-cache"),
		"NO_COLOR=1",
	)
}

// ClusterSpec is one simulated CassKop cluster to create.
type ClusterSpec struct {
	Namespace    string
	Nodes        int
	Decommission time.Duration
	// Stream meters the decommissions (the streaming figures); nil: fixed timings.
	Stream *StreamSim
}

// StreamSim are the simulated Cassandra's streaming knobs of a cluster: each node's Load
// ("<n> bytes"), StreamTimeScale (sim.Options) and the cost of a nodetool call.
type StreamSim struct {
	Load     string
	Scale    float64
	ExecCost time.Duration
}

// CreateClusters creates the clusters concurrently (a StatefulSet creates its pods one at
// a time, so concurrent clusters take about as long as the biggest one).
func (e *Env) CreateClusters(ctx context.Context, specs []ClusterSpec) (map[string]*fixture.Cluster, error) {
	var mu sync.Mutex
	out := map[string]*fixture.Cluster{}
	var errs []string
	var wg sync.WaitGroup
	for _, s := range specs {
		wg.Go(func() {
			t0 := time.Now()
			cl, err := e.createCluster(ctx, s)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", s.Namespace, err))
				return
			}
			out[s.Namespace] = cl
			e.Log("cluster %s/%s ready: %d pods in %s", s.Namespace, cl.Name, len(cl.Pods), time.Since(t0).Round(100*time.Millisecond))
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return out, fmt.Errorf("creating clusters: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// ClusterName is the CassandraCluster name of every bench cluster.
const ClusterName = "bench"

func (e *Env) createCluster(ctx context.Context, s ClusterSpec) (*fixture.Cluster, error) {
	if err := e.Clients.CreateNamespace(ctx, s.Namespace); err != nil {
		return nil, err
	}
	sim := fixture.SimOptions{Version: "4.1", DecommissionTime: s.Decommission, RF: 1}
	if st := s.Stream; st != nil {
		sim.Load, sim.StreamTimeScale, sim.ExecCost = st.Load, st.Scale, st.ExecCost
	}
	cl, err := e.Clients.NewCassKopCluster(ctx, s.Namespace, e.CRD, fixture.ClusterOptions{
		Name:     ClusterName,
		DCs:      []fixture.DC{{Name: "dc1", Racks: []string{"rack1"}, Nodes: s.Nodes}},
		Sim:      sim,
		StateDir: filepath.Join(e.KTE.Dir, "sim", s.Namespace),
		Ready:    time.Duration(s.Nodes)*3*time.Second + time.Minute,
	})
	if err != nil {
		return nil, err
	}
	// The plugin refuses a scale-down when the remaining nodes' data volumes cannot hold
	// the leaving nodes' data (Load from nodetool status vs the data PVC's capacity). The
	// fixture's nodes hold 1.2 GiB on 1 GiB volumes; give the node that stays (ordinal 0)
	// a volume big enough for the whole rack, as a real cluster would have.
	if err := e.makeRoom(ctx, cl, fixture.PodName(cl.Name, "dc1", "rack1", 0), RoomSize); err != nil {
		return nil, err
	}
	return cl, nil
}

// RoomSize is the capacity given to the data volume of the node a scale-down keeps.
const RoomSize = "1Ti"

// makeRoom sets the capacity of pod's data volume: the PV's spec and the bound PVC's
// status (the PV controller copies capacity to a claim only when it becomes Bound, so it
// leaves the pair alone afterwards).
func (e *Env) makeRoom(ctx context.Context, cl *fixture.Cluster, pod, size string) error {
	pvcs := e.Clients.Kube.CoreV1().PersistentVolumeClaims(cl.Namespace)
	pvc, err := pvcs.Get(ctx, "data-"+pod, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the data PVC of %s: %w", pod, err)
	}
	body := []byte(`{"spec":{"capacity":{"storage":"` + size + `"}}}`)
	if _, err := e.Clients.Kube.CoreV1().PersistentVolumes().Patch(ctx, pvc.Spec.VolumeName, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("resizing PV %s: %w", pvc.Spec.VolumeName, err)
	}
	body = []byte(`{"status":{"capacity":{"storage":"` + size + `"}}}`)
	if _, err := pvcs.Patch(ctx, pvc.Name, types.MergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("resizing PVC %s: %w", pvc.Name, err)
	}
	return nil
}

// The cold start's yardstick plugins: `kubectl kcassnoop` exits at once (kubectl's plugin
// dispatch alone), `kubectl kcassbare` is the bare client-go lister and
// `kubectl kcassclirt` the same lister taking kubectl's flags from cli-runtime.
const (
	NoopPlugin  = "kcassnoop"
	BarePlugin  = "kcassbare"
	ClirtPlugin = "kcassclirt"
)

// buildLikePlugin builds pkg with the flags `make build` gives the plugin, so that the
// yardsticks' start-up is comparable with the plugin's.
func buildLikePlugin(ctx context.Context, root, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}
