package cli

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// operatorClients are the clients an operator adapter is connected with.
func operatorClients(c *kube.Clients) operator.Clients {
	return operator.Clients{Dynamic: c.Dynamic, Discovery: c.Discovery, Kube: c.Kube}
}

// namespace is the namespace to work in: -n, else the kubeconfig context's.
func (o *Options) namespace(c *kube.Clients) string {
	if f := o.ConfigFlags.Namespace; f != nil && *f != "" {
		return *f
	}
	return c.Namespace
}

// clients builds (once) the API clients from kubectl's standard flags.
func (o *Options) clients() (*kube.Clients, error) {
	if o.Clients != nil {
		return o.Clients, nil
	}
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("cannot load the kubeconfig: %w", err)
	}
	cfg.UserAgent = "kubectl-cassandra"
	if o.WrapTransport != nil {
		cfg.Wrap(o.WrapTransport)
	}
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("cannot determine the namespace: %w", err)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// Discovery takes no context: bound it so an unreachable server cannot hang a command
	// (or shell completion) forever.
	dcfg := *cfg
	if dcfg.Timeout == 0 {
		dcfg.Timeout = 10 * time.Second
	}
	disc, err := discovery.NewDiscoveryClientForConfig(&dcfg)
	if err != nil {
		return nil, err
	}
	o.Clients = &kube.Clients{Kube: kc, Dynamic: dc, Discovery: disc, Config: cfg, Namespace: ns}
	return o.Clients, nil
}

// detectCRD returns the kind of the operator's cluster resource and its served API
// ("CassandraCluster", "db.orange.com/v2"), or "" when no cluster is reachable or no
// operator's CRD is installed.
func (o *Options) detectCRD(ctx context.Context) (kind, api string) {
	_, a, err := o.adapter(ctx)
	if err != nil {
		return "", ""
	}
	return a.Kind(), a.GVR().GroupVersion().String()
}
