// Package kube holds the Kubernetes plumbing the plugin shares: clients, pod exec,
// condition waits with deadlines, and guarded writes.
package kube

import (
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Clients are the API clients a command needs, built once from kubectl's flags
// (or injected by tests).
type Clients struct {
	Kube      kubernetes.Interface
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	// Config is the REST config used for pod exec (nil in unit tests, which inject an Execer).
	Config *rest.Config
	// Namespace is the namespace from --namespace or the kubeconfig context.
	Namespace string
}
