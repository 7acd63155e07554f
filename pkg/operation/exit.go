package operation

import "fmt"

// ExitRefused is the exit code of a refusal by a precondition, nothing changed (the
// plugin's documented exit codes: kubectl cassandra --help).
const ExitRefused = 3

// CodedError carries an exit code with an error: the command exits with Code.
type CodedError struct {
	Code int
	Err  error
}

func (e *CodedError) Error() string { return e.Err.Error() }
func (e *CodedError) Unwrap() error { return e.Err }

// Refusedf is a refusal by a precondition, nothing changed (exit ExitRefused).
func Refusedf(format string, a ...any) error {
	return &CodedError{Code: ExitRefused, Err: fmt.Errorf(format, a...)}
}
