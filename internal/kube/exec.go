package kube

import (
	"bytes"
	"context"
	"net/http"
	"net/url"

	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// PodExec runs commands in one container of pods in one namespace, like `kubectl exec
// -c CONTAINER POD -- argv...`, without a shell or a TTY (Exec without stdin, Stream
// with one when given).
type PodExec struct {
	Config    *rest.Config
	Client    kubernetes.Interface
	Namespace string
	Container string
}

// Exec runs argv in the pod and returns what it printed (Stream into buffers). A
// non-zero exit is an error.
func (p PodExec) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	err := p.Stream(ctx, pod, argv, nil, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// newExecutor prefers WebSockets (the default since Kubernetes 1.30) and falls back to
// SPDY for older servers, as kubectl does.
func newExecutor(cfg *rest.Config, url *url.URL) (remotecommand.Executor, error) {
	ws, err := remotecommand.NewWebSocketExecutor(cfg, http.MethodGet, url.String())
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(cfg, http.MethodPost, url)
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}
