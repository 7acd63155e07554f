// Command democluster prepares and observes the simulated CassKop cluster of hack/demo.sh,
// with the same fixture code as the e2e tests (test/e2e/fixture).
//
//	democluster create --kubeconfig K --namespace NS --name CC --nodes 4 --state-dir DIR
//	    installs the CassandraCluster CRD when none is installed, creates NS and a CassKop-
//	    shaped cluster CC (1 DC, 1 rack) with the simulated nodetool behind `kubectl exec`.
//	democluster wait-step --kubeconfig K --namespace NS --name CC --kind decommission --nth 2 [--state-dir DIR]
//	    waits until the plugin's checkpoint shows the nth step of that kind started (or done);
//	    for a decommission with --state-dir, also until the simulated node is leaving.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/e2e/fixture"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: democluster create|wait-step [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "create":
		err = create(os.Args[2:])
	case "wait-step":
		err = waitStep(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "democluster:", err)
		os.Exit(1)
	}
}

type common struct {
	kubeconfig, namespace, name string
}

func (c *common) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	fs.StringVar(&c.namespace, "namespace", "cassandra-demo", "namespace")
	fs.StringVar(&c.name, "name", "cassandra-demo", "CassandraCluster name")
}

func create(args []string) error {
	fs := flag.NewFlagSet("create", flag.ExitOnError)
	var c common
	c.flags(fs)
	nodes := fs.Int("nodes", 4, "nodes in the rack")
	stateDir := fs.String("state-dir", "", "dir for the simulated ring's state file (required)")
	decom := fs.Duration("decommission-time", 3*time.Second, "how long a simulated decommission takes")
	crdPath := fs.String("crd", "", "CRD to install when none is (default: CassKop 2.3's if ../shared/casskop exists, else the e2e stand-in)")
	_ = fs.Parse(args)
	if *stateDir == "" {
		return errors.New("--state-dir is required")
	}
	ctx := context.Background()
	cs, err := fixture.NewClients(c.kubeconfig)
	if err != nil {
		return err
	}
	crd, err := cs.DescribeCRD(ctx)
	if apierrors.IsNotFound(err) { // errors.As inside: sees through the wrapping
		v, verr := pickCRD(*crdPath)
		if verr != nil {
			return verr
		}
		fmt.Printf("installing CRD %s from %s\n", fixture.CRDName, v.Path)
		crd, err = cs.InstallCRD(ctx, v)
	}
	if err != nil {
		return err
	}
	if err := cs.CreateNamespace(ctx, c.namespace); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	t0 := time.Now()
	cl, err := cs.NewCassKopCluster(ctx, c.namespace, crd, fixture.ClusterOptions{
		Name:     c.name,
		DCs:      []fixture.DC{{Name: "dc1", Racks: []string{"rack1"}, Nodes: *nodes}},
		StateDir: *stateDir,
		Sim:      fixture.SimOptions{DecommissionTime: *decom, LeftAnnounce: *decom / 4},
	})
	if err != nil {
		return err
	}
	fmt.Printf("CassandraCluster %s/%s ready in %s: StatefulSet %s, pods:\n", cl.Namespace, cl.Name,
		time.Since(t0).Round(100*time.Millisecond), fixture.StatefulSetName(cl.Name, "dc1", "rack1"))
	for _, p := range cl.Pods {
		fmt.Printf("  %-28s %-15s host %s  PVCs %v\n", p.Name, p.IP, p.HostID, p.PVCs)
	}
	fmt.Printf("simulated ring: %s\n", cl.SimState)
	return nil
}

func pickCRD(path string) (fixture.CRDVariant, error) {
	if path != "" {
		return fixture.CRDVariant{Name: filepath.Base(path), Path: path}, nil
	}
	root, err := fixture.RepoRoot()
	if err != nil {
		return fixture.CRDVariant{}, err
	}
	vs := fixture.CRDVariants(root)
	return vs[len(vs)-1], nil // CassKop 2.3 when available (the maintained fork)
}

func waitStep(args []string) error {
	fs := flag.NewFlagSet("wait-step", flag.ExitOnError)
	var c common
	c.flags(fs)
	kind := fs.String("kind", "decommission", "step kind")
	nth := fs.Int("nth", 1, "wait for the nth step of that kind")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after")
	stateDir := fs.String("state-dir", "", "the simulated ring's dir (as given to create): wait for the node to be leaving too")
	_ = fs.Parse(args)
	cs, err := fixture.NewClients(c.kubeconfig)
	if err != nil {
		return err
	}
	var seen fixture.Step
	err = cs.WatchCR(context.Background(), c.namespace, c.name, *timeout, func(cr *unstructured.Unstructured) bool {
		cp, ok, err := fixture.ParseCheckpoint(cr)
		if err != nil || !ok {
			return false
		}
		n := 0
		for _, s := range cp.Steps {
			if s.Kind == *kind && (s.State == "started" || s.State == "done") {
				n++
				if n == *nth {
					seen = s
					return true
				}
			}
		}
		return false
	})
	if err != nil {
		return fmt.Errorf("waiting for %s #%d: %w", *kind, *nth, err)
	}
	if *stateDir != "" && *kind == "decommission" && seen.Pod != "" {
		// "started" is written before the nodetool call; the demo wants the node leaving.
		store := sim.Open(filepath.Join(*stateDir, c.name+".json"))
		err = fixture.WaitFor(context.Background(), seen.Pod+" leaving", *timeout, 100*time.Millisecond, func(context.Context) (bool, error) {
			v, err := store.Node(seen.Pod)
			return err == nil && (v.Decommissioning || v.Mode == sim.ModeDecommissioned), err
		})
		if err != nil {
			return err
		}
	}
	fmt.Printf("step %s is %s\n", seen.ID, seen.State)
	return nil
}
