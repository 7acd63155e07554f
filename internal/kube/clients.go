// Package kube holds the Kubernetes plumbing the plugin shares: the API clients, pod
// exec (buffered or streamed), which API errors are worth retrying, and the Events that
// record a run's steps on the cluster resource.
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
