package kube

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// PodExec runs commands in one container of pods in one namespace, like `kubectl exec
// -c CONTAINER POD -- argv...`, without a shell and without stdin or a TTY.
type PodExec struct {
	Config    *rest.Config
	Client    kubernetes.Interface
	Namespace string
	Container string
}

// Exec runs argv in the pod and returns what it printed. A non-zero exit is an error.
func (p PodExec) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	req := p.Client.CoreV1().RESTClient().Post().
		Resource("pods").Namespace(p.Namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: p.Container,
			Command:   argv,
			Stdout:    true,
			Stderr:    true,
		}, scheme.ParameterCodec)
	exec, err := newExecutor(p.Config, req.URL())
	if err != nil {
		return "", "", err
	}
	var stdout, stderr bytes.Buffer
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		err = fmt.Errorf("exec in %s/%s: %w", p.Namespace, pod, err)
	}
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
