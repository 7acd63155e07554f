package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// failingOnceExec fails the first call of each nodetool command in fail with its error,
// then lets the world answer; it counts the calls by command.
type failingOnceExec struct {
	w    *world.World
	mu   sync.Mutex
	fail map[string]error
	n    map[string]int
}

func (f *failingOnceExec) Exec(ctx context.Context, pod string, argv []string) (string, string, error) {
	cmd := nodetoolCommand(argv)
	f.mu.Lock()
	f.n[cmd]++
	err, ok := f.fail[cmd]
	delete(f.fail, cmd)
	f.mu.Unlock()
	if ok {
		return "", "", err
	}
	return f.w.Exec(ctx, pod, argv)
}

func nodetoolCommand(argv []string) string {
	for i, a := range argv {
		if a == "nodetool" && i+1 < len(argv) {
			return argv[i+1]
		}
	}
	return "?"
}

// A read that fails once while planning (the exec stream cut, or nodetool failing) is
// asked again: the scale-down goes on instead of refusing, and nothing is asked twice
// that changes anything.
func TestPlanningReadsSurviveOneFailedExec(t *testing.T) {
	streamCut := fmt.Errorf("exec in ns/pod: %w", io.ErrUnexpectedEOF)
	exitOne := errors.New("command terminated with non-zero exit code: 1")
	for _, tc := range []struct {
		name string
		fail map[string]error
	}{
		{"ring-stream-cut", map[string]error{"status": streamCut}},
		{"describecluster-stream-cut", map[string]error{"describecluster": streamCut}},
		{"describecluster-failed", map[string]error{"describecluster": exitOne}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := world.New(t, world.Opts{Nodes: 2, Version: "4.1"})
			ex := &failingOnceExec{w: w, fail: tc.fail, n: map[string]int{}}
			_, stderr, code := runWith(w, ex, scale41...)
			require.Equal(t, 0, code, "%s", stderr)
			w.AssertConverged(1, tc.name)
			for cmd := range tc.fail {
				assert.GreaterOrEqual(t, ex.n[cmd], 2, "%s asked again", cmd)
			}
			assert.Equal(t, 1, ex.n["decommission"], "one decommission")
		})
	}
}
