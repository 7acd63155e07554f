package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptrace"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/lifecycle"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// session is one command's view of one cluster.
type session struct {
	c       *kube.Clients
	adapter operator.Adapter
	cluster topology.Cluster
	store   *checkpoint.Store
	nt      nodetool.Client
}

// adapters connects every operator whose cluster resource the API server serves, with
// resolved API versions, in main.go's order of preference.
func (o *Options) adapters(ctx context.Context) (*kube.Clients, []operator.Adapter, error) {
	c, err := o.clients()
	if err != nil {
		return nil, nil, err
	}
	if len(o.Operators) == 0 {
		return nil, nil, fmt.Errorf("this build supports no operator")
	}
	// Each operator's discovery is asked at once (each a round trip of its own) and
	// judged in the order of preference.
	adapters := make([]operator.Adapter, len(o.Operators))
	errs := make([]error, len(o.Operators))
	var wg sync.WaitGroup
	for i, op := range o.Operators {
		adapters[i] = op.Connect(operatorClients(c))
		wg.Go(func() { _, errs[i] = adapters[i].Resolve(ctx) })
	}
	wg.Wait()
	var served []operator.Adapter
	var first error
	for i, a := range adapters {
		if errs[i] == nil {
			served = append(served, a)
			continue
		}
		if first == nil {
			first = errs[i]
		}
		if !errors.Is(errs[i], operator.ErrNoResource) {
			break // the API server is not answering: the next is not trusted either
		}
	}
	if len(served) == 0 {
		return nil, nil, adapterError(first)
	}
	return c, served, nil
}

// adapter is the first operator the API server serves (completion, CRD detection).
func (o *Options) adapter(ctx context.Context) (*kube.Clients, operator.Adapter, error) {
	c, served, err := o.adapters(ctx)
	if err != nil {
		return nil, nil, err
	}
	return c, served[0], nil
}

// holding is the operator whose cluster resource holds the cluster named in args (with
// no name, the one operator with clusters in the namespace), so that a build with
// several operators opens each cluster through its own, and its checkpoint with the
// operator that wrote it. With one operator served it reads nothing; when no operator
// has the cluster, the first one's read says so.
func (o *Options) holding(ctx context.Context, c *kube.Clients, served []operator.Adapter, args []string) (operator.Adapter, *clusterRead, error) {
	if len(served) == 1 {
		return served[0], nil, nil
	}
	ns := o.namespace(c)
	if len(args) > 0 {
		// Every operator's read at once, the first in the order of preference that has
		// the cluster kept: open does not read it again.
		reads := make([]clusterRead, len(served))
		var wg sync.WaitGroup
		for i, a := range served {
			wg.Go(func() { reads[i].cl, reads[i].u, reads[i].err = a.Get(ctx, ns, args[0]) })
		}
		wg.Wait()
		for i := range reads {
			if reads[i].err == nil {
				return served[i], &reads[i], nil
			}
		}
		return served[0], nil, nil
	}
	var with []operator.Adapter
	for _, a := range served {
		if l, err := a.List(ctx, ns); err == nil && len(l) > 0 {
			with = append(with, a)
		}
	}
	if len(with) > 1 {
		var kinds []string
		for _, a := range with {
			kinds = append(kinds, a.Kind())
		}
		return nil, nil, exit.Usagef("namespace %s has clusters of several operators (%s): name one", ns, strings.Join(kinds, ", "))
	}
	if len(with) == 1 {
		return with[0], nil, nil
	}
	return served[0], nil, nil
}

// clusterRead is one read of the cluster resource (operator.Adapter.Get).
type clusterRead struct {
	cl  topology.Cluster
	u   *unstructured.Unstructured
	err error
}

// assumedAdapter is the first operator's adapter, its preferred API version assumed
// without discovery (read-only commands that must start fast).
func (o *Options) assumedAdapter(c *kube.Clients) (operator.Adapter, error) {
	if len(o.Operators) == 0 {
		return nil, fmt.Errorf("this build supports no operator")
	}
	a := o.Operators[0].Connect(operatorClients(c))
	a.Assume()
	return a, nil
}

// adapterError explains a failure to find the cluster resource.
func adapterError(err error) error {
	if errors.Is(err, operator.ErrNoResource) {
		return exit.Refusedf("%v", err)
	}
	return fmt.Errorf("cannot reach the cluster: %w", err)
}

// open resolves the cluster resource named in args (or the only one in the namespace).
func (o *Options) open(ctx context.Context, args []string) (*session, error) {
	c, served, err := o.adapters(ctx)
	if err != nil {
		return nil, err
	}
	a, read, err := o.holding(ctx, c, served, args)
	if err != nil {
		return nil, err
	}
	return o.openWith(ctx, c, a, args, nil, read)
}

// openAssumed is open without the discovery round trip (in a build of one operator): its
// first read names the operator's preferred version directly, and asks discovery only
// when the server answers NotFound. Read-only commands that must start fast (status)
// use it.
//
// connected, when not nil, is called once with the cluster's namespace and name as soon
// as the cluster resource's read has its connection to the API server, before that read
// is answered: status starts its lists there, so that they share the connection (sent
// before it exists, each would open its own) without waiting a round trip for the
// cluster. It is called at the latest when the read succeeds (clients with no HTTP
// connection, as in tests), and never after a failed read.
func (o *Options) openAssumed(ctx context.Context, args []string, connected func(c *kube.Clients, a operator.Adapter, ns, name string)) (*session, error) {
	if len(o.Operators) > 1 {
		// Which operator holds the cluster is found by reading: no version to assume.
		s, err := o.open(ctx, args)
		if err == nil && connected != nil {
			connected(s.c, s.adapter, s.cluster.Namespace, s.cluster.Name)
		}
		return s, err
	}
	c, err := o.clients()
	if err != nil {
		return nil, err
	}
	a, err := o.assumedAdapter(c)
	if err != nil {
		return nil, err
	}
	return o.openWith(ctx, c, a, args, connected, nil)
}

// read, when not nil, is the cluster resource as holding read it: not read again.
func (o *Options) openWith(ctx context.Context, c *kube.Clients, a operator.Adapter, args []string, connected func(c *kube.Clients, a operator.Adapter, ns, name string), read *clusterRead) (*session, error) {
	ns := o.namespace(c)
	var name string
	if len(args) > 0 {
		name = args[0]
	} else {
		list, err := a.List(ctx, ns)
		if errors.Is(err, operator.ErrNoResource) {
			return nil, adapterError(err)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot list %ss in namespace %s: %w", a.Kind(), ns, err)
		}
		switch len(list) {
		case 0:
			return nil, exit.Usagef("no %s in namespace %s (use -n NAMESPACE)", a.Kind(), ns)
		case 1:
			name = list[0].Name
		default:
			var names []string
			for _, l := range list {
				names = append(names, l.Name)
			}
			return nil, exit.Usagef("namespace %s has several %ss (%s): name one", ns, a.Kind(), strings.Join(names, ", "))
		}
	}
	var once sync.Once
	getCtx := ctx
	if connected != nil {
		getCtx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
			once.Do(func() { connected(c, a, ns, name) })
		}})
	}
	var (
		cl  topology.Cluster
		u   *unstructured.Unstructured
		err error
	)
	if read != nil {
		cl, u = read.cl, read.u
	} else {
		cl, u, err = a.Get(getCtx, ns, name)
	}
	if connected != nil {
		if err == nil {
			once.Do(func() { connected(c, a, ns, name) })
		} else {
			once.Do(func() {}) // waits for a call under way; none after this
		}
	}
	if errors.Is(err, operator.ErrNoResource) {
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
		return nil, &clusterNotFound{error: exit.Usagef("%s %q not found in namespace %s%s", a.Kind(), name, ns, hint), c: c, a: a, ns: ns, name: name}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s %s/%s: %w", a.Kind(), ns, name, err)
	}
	var ex nodetool.Execer = o.Execer
	if ex == nil {
		ex = kube.PodExec{Config: c.Config, Client: c.Kube, Namespace: ns, Container: a.Container()}
	}
	store := &checkpoint.Store{Obj: a.Object(ns, name), Kinds: o.Kinds.Schemas(), Operator: a.Name(), Now: o.Now}
	if u != nil {
		store.Seed(u.GetAnnotations(), string(u.GetUID()), u.GetResourceVersion())
	}
	return &session{
		c: c, adapter: a, cluster: cl, store: store,
		nt: nodetool.Client{Exec: ex, Retry: kube.ExecTransient, Auth: o.jmxAuth(c, ns, a.JMXSecretName(u))},
	}, nil
}

// openInFlight opens the cluster named in args and reads the operation in flight on
// it (nil: none); an unusable checkpoint is explained (checkpointError).
func (o *Options) openInFlight(ctx context.Context, args []string) (*session, *record.Checkpoint, error) {
	s, err := o.open(ctx, args)
	if err != nil {
		return nil, nil, err
	}
	cp, err := s.store.Load(ctx)
	if err != nil {
		return nil, nil, o.lifecycle(s, nil).CheckpointError(err)
	}
	return s, cp, nil
}

// resumeHint is the command that continues the operation on this cluster.
func (s *session) resumeHint() string {
	return fmt.Sprintf("kubectl cassandra resume -n %s %s", s.cluster.Namespace, s.cluster.Name)
}

func (s *session) statusHint() string {
	return fmt.Sprintf("kubectl cassandra status -n %s %s", s.cluster.Namespace, s.cluster.Name)
}

// clusterNotFound is open's answer for a named cluster that does not exist, with what
// a command needs to release an operator paused for an operation that went with it.
type clusterNotFound struct {
	error
	c        *kube.Clients
	a        operator.Adapter
	ns, name string
}

func (e *clusterNotFound) Unwrap() error { return e.error }

// reapAfterGone takes out what operations whose cluster is gone left (the cluster
// resource deleted while its operation ran: its checkpoint went with it), when err
// says the cluster named is not found (lifecycle.ReapAfterGone).
func (o *Options) reapAfterGone(ctx context.Context, err error) {
	var nf *clusterNotFound
	if errors.As(err, &nf) {
		deps := o.lifecycleDeps(nf.c, nf.a)
		// The pods of the gone cluster may run until they are collected: the stream
		// limits set on them are put back through nodetool (--jmx-secret: the cluster
		// that named its own Secret is gone).
		var ex nodetool.Execer = o.Execer
		if ex == nil {
			ex = kube.PodExec{Config: nf.c.Config, Client: nf.c.Kube, Namespace: nf.ns, Container: nf.a.Container()}
		}
		deps.Nodetool = nodetool.Client{Exec: ex, Retry: kube.ExecTransient, Auth: o.jmxAuth(nf.c, nf.ns, "")}
		lifecycle.New(deps).ReapAfterGone(ctx, nf.ns, nf.name)
	}
}
