package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptrace"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/topology"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
)

// session is one command's view of one cluster.
type session struct {
	c       *Clients
	adapter *casskop.Adapter
	cluster topology.Cluster
	store   *checkpoint.Store
	nt      nodetool.Client
}

// adapter builds the CassKop adapter with a resolved API version.
func (o *Options) adapter(ctx context.Context) (*Clients, *casskop.Adapter, error) {
	c, err := o.clients()
	if err != nil {
		return nil, nil, err
	}
	a := &casskop.Adapter{Dynamic: c.Dynamic, Discovery: c.Discovery, Kube: c.Kube}
	if _, err := a.Resolve(ctx); err != nil {
		return nil, nil, adapterError(err)
	}
	return c, a, nil
}

// adapterError explains a failure to find the CassandraCluster resource.
func adapterError(err error) error {
	if errors.Is(err, casskop.ErrNoCRD) {
		return exit.Refusedf("%v", err)
	}
	return fmt.Errorf("cannot reach the cluster: %w", err)
}

// open resolves the CassandraCluster named in args (or the only one in the namespace).
func (o *Options) open(ctx context.Context, args []string) (*session, error) {
	c, a, err := o.adapter(ctx)
	if err != nil {
		return nil, err
	}
	return o.openWith(ctx, c, a, args, nil)
}

// openAssumed is open without the discovery round trip: its first read names
// CassKop's preferred version directly, and asks discovery only when the server answers
// NotFound. Read-only commands that must start fast (status) use it.
//
// connected, when not nil, is called once with the cluster's namespace and name as soon
// as the cluster resource's read has its connection to the API server, before that read
// is answered: status starts its lists there, so that they share the connection (sent
// before it exists, each would open its own) without waiting a round trip for the
// cluster. It is called at the latest when the read succeeds (clients with no HTTP
// connection, as in tests), and never after a failed read.
func (o *Options) openAssumed(ctx context.Context, args []string, connected func(c *Clients, a *casskop.Adapter, ns, name string)) (*session, error) {
	c, err := o.clients()
	if err != nil {
		return nil, err
	}
	a := &casskop.Adapter{Dynamic: c.Dynamic, Discovery: c.Discovery, Kube: c.Kube}
	a.Assume()
	return o.openWith(ctx, c, a, args, connected)
}

func (o *Options) openWith(ctx context.Context, c *Clients, a *casskop.Adapter, args []string, connected func(c *Clients, a *casskop.Adapter, ns, name string)) (*session, error) {
	ns := c.Namespace
	if f := o.ConfigFlags.Namespace; f != nil && *f != "" {
		ns = *f
	}
	var name string
	if len(args) > 0 {
		name = args[0]
	} else {
		list, err := a.List(ctx, ns)
		if errors.Is(err, casskop.ErrNoCRD) {
			return nil, adapterError(err)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot list CassandraClusters in namespace %s: %w", ns, err)
		}
		switch len(list) {
		case 0:
			return nil, exit.Usagef("no CassandraCluster in namespace %s (use -n NAMESPACE)", ns)
		case 1:
			name = list[0].Name
		default:
			var names []string
			for _, l := range list {
				names = append(names, l.Name)
			}
			return nil, exit.Usagef("namespace %s has several CassandraClusters (%s): name one", ns, strings.Join(names, ", "))
		}
	}
	var once sync.Once
	getCtx := ctx
	if connected != nil {
		getCtx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
			once.Do(func() { connected(c, a, ns, name) })
		}})
	}
	cl, u, err := a.Get(getCtx, ns, name)
	if connected != nil {
		if err == nil {
			once.Do(func() { connected(c, a, ns, name) })
		} else {
			once.Do(func() {}) // waits for a call under way; none after this
		}
	}
	if errors.Is(err, casskop.ErrNoCRD) {
		return nil, adapterError(err)
	}
	if apierrors.IsNotFound(err) {
		hint := ""
		if list, lerr := a.List(ctx, ns); lerr == nil && len(list) > 0 {
			var names []string
			for _, l := range list {
				names = append(names, l.Name)
			}
			hint = " (clusters there: " + strings.Join(names, ", ") + ")"
		}
		return nil, exit.Usagef("CassandraCluster %q not found in namespace %s%s", name, ns, hint)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read CassandraCluster %s/%s: %w", ns, name, err)
	}
	var ex nodetool.Execer = o.Execer
	if ex == nil {
		ex = kube.PodExec{Config: c.Config, Client: c.Kube, Namespace: ns, Container: casskop.Container}
	}
	return &session{
		c: c, adapter: a, cluster: cl,
		store: &checkpoint.Store{Obj: a.Object(ns, name), Now: o.Now},
		nt:    nodetool.Client{Exec: ex, Retry: kube.ExecTransient, Auth: o.jmxAuth(c, ns, u)},
	}, nil
}

// resumeHint is the command that continues the operation on this cluster.
func (s *session) resumeHint() string {
	return fmt.Sprintf("kubectl cassandra resume -n %s %s", s.cluster.Namespace, s.cluster.Name)
}

func (s *session) statusHint() string {
	return fmt.Sprintf("kubectl cassandra status -n %s %s", s.cluster.Namespace, s.cluster.Name)
}
