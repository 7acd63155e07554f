// Package exit maps errors to the plugin's documented exit codes.
//
//	0 done · 1 error · 2 bad usage, nothing changed · 3 refused by a precondition,
//	nothing changed · 4 interrupted or timed out, checkpoint saved (run resume)
package exit

import (
	"errors"
	"fmt"

	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// The documented exit codes.
const (
	OK    = 0
	Error = 1
	Usage = 2

	Interrupted = 4
)

// Help is the exit-code table printed in --help.
const Help = `Exit codes:
  0  done (or nothing to do)
  1  error: something failed; the message says what state things are in and what to run next
  2  bad usage: invalid flags or arguments, nothing changed
  3  refused by a precondition (unsafe, unsupported, or the cluster is busy), nothing changed
  4  interrupted or timed out; the checkpoint is saved, run "kubectl cassandra resume"`

func wrap(code int, format string, a ...any) error {
	return &pub.CodedError{Code: code, Err: fmt.Errorf(format, a...)}
}

// Usagef is a bad-usage error (exit 2).
func Usagef(format string, a ...any) error { return wrap(Usage, format, a...) }

// Refusedf is a refusal by a precondition (exit 3).
func Refusedf(format string, a ...any) error { return wrap(pub.ExitRefused, format, a...) }

// Interruptedf is an interruption with the checkpoint saved (exit 4).
func Interruptedf(format string, a ...any) error { return wrap(Interrupted, format, a...) }

// WithCode attaches a code to an existing error.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &pub.CodedError{Code: code, Err: err}
}

// Code returns the exit code for err: 0 for nil, the attached code, else 1.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var ce *pub.CodedError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return Error
}
