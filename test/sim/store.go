package sim

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Store holds one simulated cluster, either in memory (unit tests) or in a JSON file
// shared by concurrent processes (the e2e harness and its nodetool-sim processes).
//
// File stores lock <path>.lock with flock (shared for reads, exclusive for writes) and
// replace the file atomically (temp file + rename), so a process killed at any point
// leaves a valid state. No lock is held while a command sleeps.
type Store struct {
	path string // "" for a memory store

	mu  sync.Mutex // memory store only
	mem *state

	now func() time.Time
	// poll is the real-time slice a blocking decommission sleeps between clock checks.
	poll time.Duration
	// sleep waits before a command answers (Fault.Slow, ExecCost); false when ctx ended.
	sleep func(ctx context.Context, d time.Duration) bool
	// execCost, when set, replaces Options.ExecCost for this process (SetExecCost).
	execCost *time.Duration
}

// Create writes a new state file (mode 0644) for a cluster and returns its store. It
// fails if the file already exists, so two harness runs cannot silently share one.
func Create(path string, opts Options, nodes []NodeSpec) (*Store, error) {
	if err := validPodSet(nodes); err != nil {
		return nil, err
	}
	s := Open(path)
	now := s.now()
	st, err := newState(opts, nodes, now)
	if err != nil {
		return nil, err
	}
	unlock, err := lockFile(path+".lock", true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sim: create state: %w", err)
	}
	_ = f.Close()
	if err := writeState(path, st); err != nil {
		_ = os.Remove(path)
		return nil, err
	}
	return s, nil
}

// Open returns the store of an existing state file. Nothing is read until the store is
// used, so errors (missing or corrupt file) surface from the method that needs the state.
func Open(path string) *Store {
	return &Store{path: path, now: time.Now, poll: 20 * time.Millisecond, sleep: sleepCtx}
}

// NewMemory returns an in-memory store, safe for concurrent goroutines. now is the clock
// every phase is derived from (nil = time.Now); an injected clock must never go backwards.
// Invalid options or nodes panic: this is a test helper and the mistake is the test's.
func NewMemory(opts Options, nodes []NodeSpec, now func() time.Time) *Store {
	poll := 20 * time.Millisecond
	if now == nil {
		now = time.Now
	} else {
		// With a fake clock the remaining time says nothing about real time: check often.
		poll = time.Millisecond
	}
	if err := validPodSet(nodes); err != nil {
		panic(err)
	}
	st, err := newState(opts, nodes, now())
	if err != nil {
		panic(err)
	}
	return &Store{mem: st, now: now, poll: poll, sleep: sleepCtx}
}

// read runs fn on the settled state at now without persisting anything.
func (s *Store) read(fn func(st *state, now time.Time) error) error {
	if s.path == "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		now := s.now()
		s.mem.settle(now)
		return fn(s.mem, now)
	}
	unlock, err := lockFile(s.path+".lock", false)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := readState(s.path)
	if err != nil {
		return err
	}
	// The clock is read under the lock so that every writer's "now" is ordered with the
	// state it wrote.
	now := s.now()
	st.settle(now)
	return fn(st, now)
}

// update runs fn on the settled state and persists it when fn returns nil.
func (s *Store) update(fn func(st *state, now time.Time) error) error {
	if s.path == "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		now := s.now()
		s.mem.settle(now)
		// Memory mutations are not transactional; fn validates before it mutates.
		return fn(s.mem, now)
	}
	unlock, err := lockFile(s.path+".lock", true)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := readState(s.path)
	if err != nil {
		return err
	}
	now := s.now()
	st.settle(now)
	if err := fn(st, now); err != nil {
		return err
	}
	return writeState(s.path, st)
}

func readState(path string) (*state, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sim: read state: %w", err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("sim: corrupt state file %s: %w", path, err)
	}
	if st.Format != stateFormat {
		return nil, fmt.Errorf("sim: state file %s has format %d, want %d", path, st.Format, stateFormat)
	}
	return &st, nil
}

// writeState replaces the file atomically: readers (and a process killed mid-write)
// see either the old or the new content, never a torn one.
func writeState(path string, st *state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("sim: write state: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(append(b, '\n'))
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		// CreateTemp makes 0600 files; the harness and kubelet may run as other users.
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("sim: write state: %w", werr)
	}
	return nil
}

// SetFault replaces the fault set of a node. Turning Down on kills the JVM (a running
// decommission is aborted, its caller gets E15); turning it off starts the JVM again
// with Restart's semantics.
func (s *Store) SetFault(pod string, f Fault) error {
	return s.UpdateFault(pod, func(cur *Fault) { *cur = f })
}

// UpdateFault changes some knobs of a node's fault set atomically (read-modify-write
// under the lock), so a harness can e.g. arm StreamFailures without clearing a Down set
// by another step. Down transitions behave as in SetFault.
func (s *Store) UpdateFault(pod string, fn func(f *Fault)) error {
	return s.update(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		f := n.Fault
		fn(&f)
		if f.StreamFailures < 0 || f.Slow < 0 || f.RebuildFailures < 0 {
			return errors.New("sim: negative fault value")
		}
		wasDown := n.Fault.Down
		n.Fault = f
		switch {
		case !wasDown && f.Down:
			if n.Exit == 0 {
				st.jvmStopped(n, now)
			}
		case wasDown && !f.Down:
			st.startJVM(n, now)
		}
		return nil
	})
}

// Restart simulates the Cassandra process of the pod restarting (and clears Down, since
// the process runs again), with the JVM options it was started with (StartFresh,
// RestartWith): a replacement that exited on a startup error tries again, as in a
// container's crash loop. The in-memory mode resets: a node that was leaving or whose
// decommission failed comes back NORMAL and peers see it UN (§6.5, §7 S7); a running
// decommission is aborted (its caller gets E15). A DECOMMISSIONED node refuses to start
// (E4): nodetool on it fails to connect from then on and peers never list it again.
func (s *Store) Restart(pod string) error {
	return s.update(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		n.Fault.Down = false
		st.startJVM(n, now)
		return nil
	})
}

// Node returns the effective state of a node now.
func (s *Store) Node(pod string) (NodeView, error) {
	var v NodeView
	err := s.read(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		v = st.view(n, now)
		return nil
	})
	return v, err
}

// Nodes returns the effective state of the node of every pod, in spec order.
func (s *Store) Nodes() ([]NodeView, error) {
	var vs []NodeView
	err := s.read(func(st *state, now time.Time) error {
		for _, n := range st.Nodes {
			if !n.Detached {
				vs = append(vs, st.view(n, now))
			}
		}
		return nil
	})
	return vs, err
}

// Endpoints returns every node peers know, including the detached ones no pod runs
// any more (a dead node a replacement takes over), in spec order.
func (s *Store) Endpoints() ([]NodeView, error) {
	var vs []NodeView
	err := s.read(func(st *state, now time.Time) error {
		for _, n := range st.Nodes {
			vs = append(vs, st.view(n, now))
		}
		return nil
	})
	return vs, err
}

// Options returns the cluster options with defaults applied.
func (s *Store) Options() (Options, error) {
	var o Options
	err := s.read(func(st *state, _ time.Time) error {
		o = st.Options
		return nil
	})
	return o, err
}

// AddNode adds a node (e.g. a scale-up, or a replacement pod with a new host ID). It is
// NORMAL at once, or, with Options.JoinTime > 0, JOINING (peers UJ) for that long; when
// metered (Options.StreamTimeScale), JOINING for JoinTime then until its Load is
// streamed from its source at that node's stream throughput.
func (s *Store) AddNode(spec NodeSpec) error {
	return s.AddNodeWithFault(spec, Fault{})
}

// EmptyNodeLoad is the Load of a node that holds no replica, only its system tables
// (nodetool status on a freshly bootstrapped node of a new datacenter shows tens of KiB).
const EmptyNodeLoad = "74.05 KiB"

// AddNodeWithFault is AddNode with the node's fault set in place from the start (e.g.
// JoinFails, or Down for a pod whose Cassandra never starts).
func (s *Store) AddNodeWithFault(spec NodeSpec, f Fault) error {
	return s.update(func(st *state, now time.Time) error {
		if spec.Load == "" && st.Schema.maxRFIn(cmp.Or(spec.DC, "dc1")) == 0 {
			// A node of a datacenter no keyspace replicates to (a new one, add-dc)
			// bootstraps owning no replica: RangeStreamer fetches nothing
			// (StorageService.bootstrap; NTS gives the DC no range), so it holds only its
			// local system tables.
			spec.Load = EmptyNodeLoad
		}
		if err := st.addNode(spec, now); err != nil {
			return err
		}
		n := st.Nodes[len(st.Nodes)-1]
		// A node joining now has just started, unlike the initial cluster.
		n.StartedAt = now
		n.Fault = f
		if st.Options.JoinTime > 0 || st.Options.metered() {
			n.Joining, n.JoinStart, n.Mode = true, now, ModeJoining
			n.StatusVersion++
			st.startJoinRates(n, now)
		}
		return nil
	})
}

// RemoveNode forgets a node entirely (its pod and data are gone, peers no longer know
// it). A decommission still blocked on it returns E15.
func (s *Store) RemoveNode(pod string) error {
	return s.update(func(st *state, _ time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		st.forget(n)
		return nil
	})
}
