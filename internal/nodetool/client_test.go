package nodetool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptedExec answers each call with the next error of errs (nil: out), and records the
// commands it was asked.
type scriptedExec struct {
	out   string
	errs  []error
	asked [][]string
}

func (e *scriptedExec) Exec(_ context.Context, _ string, argv []string) (string, string, error) {
	e.asked = append(e.asked, argv)
	if len(e.errs) > 0 {
		err := e.errs[0]
		e.errs = e.errs[1:]
		if err != nil {
			return "", "", err
		}
	}
	return e.out, "", nil
}

var errStream = fmt.Errorf("exec in ns/pod: %w", io.ErrUnexpectedEOF)

func passing(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }

func TestReadsAreAskedAgainAfterAPassingExecFailure(t *testing.T) {
	ex := &scriptedExec{out: fixture(t, "status-4.1-steady.txt"), errs: []error{errStream, errStream}}
	r, err := Client{Exec: ex, Retry: passing}.Status(context.Background(), "pod")
	require.NoError(t, err)
	assert.NotEmpty(t, r.Nodes)
	assert.Len(t, ex.asked, 3, "two failures, then the answer")
}

func TestReadsGiveUpAfterThreeAttempts(t *testing.T) {
	ex := &scriptedExec{errs: []error{errStream, errStream, errStream, nil}}
	_, err := Client{Exec: ex, Retry: passing}.Netstats(context.Background(), "pod")
	require.Error(t, err)
	assert.Len(t, ex.asked, 3)
}

func TestReadsAreNotAskedAgainWhenNodetoolAnswered(t *testing.T) {
	exitErr := errors.New("command terminated with non-zero exit code: 1")
	ex := &scriptedExec{errs: []error{exitErr, nil}}
	_, err := Client{Exec: ex, Retry: passing}.DescribeCluster(context.Background(), "pod")
	require.Error(t, err)
	assert.Len(t, ex.asked, 1, "nodetool's own failure is an answer")

	ex = &scriptedExec{errs: []error{errStream, nil}}
	_, err = Client{Exec: ex}.Info(context.Background(), "pod")
	require.Error(t, err)
	assert.Len(t, ex.asked, 1, "without Retry nothing is asked again")
}

func TestDecommissionIsNeverAskedAgain(t *testing.T) {
	ex := &scriptedExec{errs: []error{errStream, nil}}
	outcome, _ := Client{Exec: ex, Retry: passing}.Decommission(context.Background(), "pod", false)
	assert.Equal(t, OutcomeUnknown, outcome)
	assert.Len(t, ex.asked, 1, "a second decommission call is not harmless on 3.11")
}

func TestReadsStopWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ex := &scriptedExec{errs: []error{errStream, nil}}
	retry := func(err error) bool { cancel(); return passing(err) }
	_, err := Client{Exec: ex, Retry: retry}.Status(ctx, "pod")
	require.Error(t, err)
	assert.Len(t, ex.asked, 1)
}
