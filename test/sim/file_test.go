package sim

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFileStoreCreateOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cluster.json")
	s, err := Create(path, Options{Version: V41}, sixNodes())
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	_, err = Create(path, Options{Version: V41}, sixNodes())
	require.Error(t, err, "an existing state must not be overwritten")
	_, err = Create(filepath.Join(t.TempDir(), "x.json"), Options{Version: "9.9"}, sixNodes())
	require.Error(t, err)

	// Another handle (as another process would have) sees the same cluster.
	o := Open(path)
	require.Equal(t, run(s, podA, "status"), run(o, podA, "status"))
	require.Equal(t, fixture(t, "status_4.x_steady.txt"), run(o, podB, "status").stdout)
	opts, err := o.Options()
	require.NoError(t, err)
	require.Equal(t, 3, opts.RF)

	// Faults set through one handle apply to commands run through another.
	require.NoError(t, s.SetFault(podC, Fault{Down: true, Slow: time.Millisecond}))
	require.Equal(t, 1, run(o, podC, "status").code)
	nv, err := o.Node(podC)
	require.NoError(t, err)
	require.Equal(t, "DN", nv.PeerCode)
	all, err := o.Nodes()
	require.NoError(t, err)
	require.Len(t, all, 6)

	// No temp files are left next to the state.
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"cluster.json", "cluster.json.lock"}, names)
}

func TestFileStoreErrors(t *testing.T) {
	dir := t.TempDir()
	missing := Open(filepath.Join(dir, "missing.json"))
	r := run(missing, podA, "status")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "nodetool-sim: ")
	_, err := missing.Node(podA)
	require.Error(t, err)

	corrupt := filepath.Join(dir, "corrupt.json")
	require.NoError(t, os.WriteFile(corrupt, []byte("{\"format\":1,\"nodes\":["), 0o644))
	r = run(Open(corrupt), podA, "status")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "corrupt state")
}

// TestFileStoreConcurrent runs many readers through separate handles while a real-clock
// decommission runs and faults change: every answer must be a complete, valid rendering
// and the file must stay valid JSON.
func TestFileStoreConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cluster.json")
	s, err := Create(path, Options{Version: V40, DecommissionTime: 300 * time.Millisecond}, sixNodes())
	require.NoError(t, err)
	ch := goRun(context.Background(), Open(path), podF, "decommission")

	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			o := Open(path)
			for j := 0; j < 10; j++ {
				r := run(o, []string{podA, podB, podD, podE}[i%4], "status")
				if r.code != 0 || !strings.HasPrefix(r.stdout, "Datacenter: dc1\n") || !strings.HasSuffix(r.stdout, "  \n\n") {
					errs <- r.stdout + r.stderr
				}
			}
		}(i)
	}
	for j := 0; j < 10; j++ {
		require.NoError(t, s.SetFault(podB, Fault{Slow: time.Duration(j%2) * time.Millisecond}))
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("bad concurrent answer: %q", e)
	}
	require.Equal(t, result{"", "", 0}, receive(t, ch))
	nv, err := s.Node(podF)
	require.NoError(t, err)
	require.Equal(t, ModeDecommissioned, nv.Mode)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var st state
	require.NoError(t, json.Unmarshal(b, &st))
}
