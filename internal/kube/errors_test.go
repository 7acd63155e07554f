package kube

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilexec "k8s.io/client-go/util/exec"
)

func TestExecTransient(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"stream cut", fmt.Errorf("exec in ns/p: %w", io.ErrUnexpectedEOF), true},
		{"connection reset", errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer"), true},
		{"server error", apierrors.NewInternalError(errors.New("boom")), true},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), true},
		{"command exited 1", fmt.Errorf("exec in ns/p: %w", utilexec.CodeExitError{Err: errors.New("command terminated with non-zero exit code: 1"), Code: 1}), false},
		{"pod gone", apierrors.NewNotFound(pods, "p"), false},
		{"forbidden", apierrors.NewForbidden(pods, "p", errors.New("no")), false},
	} {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, ExecTransient(tt.err)) })
	}
}
