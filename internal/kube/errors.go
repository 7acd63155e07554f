package kube

import (
	"context"
	"errors"
	"net"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilexec "k8s.io/client-go/util/exec"
)

// Transient reports whether an API error may go away by itself (throttling, a server
// or network fault, a timeout), so a read or a write may be retried.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	if apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) && se.ErrStatus.Code >= 500 {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection refused", "connection reset", "EOF", "http2: ", "i/o timeout", "TLS handshake timeout"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// ExecTransient reports whether a failed exec may succeed if run again: the stream or
// the API server failed (Transient), not the command, which ran and exited non-zero.
func ExecTransient(err error) bool {
	var exitErr utilexec.ExitError
	if errors.As(err, &exitErr) {
		return false
	}
	return Transient(err)
}
