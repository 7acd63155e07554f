package kube

import (
	"context"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
)

// Stream runs argv in the pod like Exec, but copies stdin (when not nil) to the command
// and its output to stdout and stderr as it comes. A non-zero exit is an error that
// ExitCode reads. stdin carries what must not be in argv (JMX credentials: argv is in
// the exec request's URL, so in the API server's audit log).
func (p PodExec) Stream(ctx context.Context, pod string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	req := p.Client.CoreV1().RESTClient().Post().
		Resource("pods").Namespace(p.Namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: p.Container,
			Command:   argv,
			Stdin:     stdin != nil,
			Stdout:    true,
			Stderr:    true,
		}, scheme.ParameterCodec)
	exec, err := newExecutor(p.Config, req.URL())
	if err != nil {
		return err
	}
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	if err != nil {
		err = fmt.Errorf("exec in %s/%s: %w", p.Namespace, pod, err)
	}
	return err
}

// ExitCode is the exit code of the command behind err (client-go's CodeExitError, or
// any error with ExitStatus), and whether err carries one.
func ExitCode(err error) (int, bool) {
	var coded interface{ ExitStatus() int }
	if errors.As(err, &coded) {
		return coded.ExitStatus(), true
	}
	return 0, false
}
