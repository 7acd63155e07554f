package sim

import (
	"errors"
	"fmt"
	"time"
)

// How a node's JVM starts: its data dir (bootstrapped or not) and its JVM options decide
// between a plain restart, a bootstrap and a replacement (docs/how-it-works/replace.md §4.1,
// §4.2; StorageService.isReplacing, prepareToJoin, checkForEndpointCollision).

// system.local's bootstrap states a node can be in ("" is COMPLETED, the zero value
// every node of the initial cluster has).
const (
	bootCompleted  = ""
	bootNeeds      = "NEEDS_BOOTSTRAP"
	bootInProgress = "IN_PROGRESS"
)

// StartOptions are the JVM options and cassandra.yaml settings the simulator checks
// when a node starts. They stay with the node: every later start of its container uses
// them (Restart), like a pod spec, until RestartWith changes them.
type StartOptions struct {
	// ReplaceAddress is -Dcassandra.replace_address_first_boot=<ip> when FirstBoot, else
	// -Dcassandra.replace_address=<ip>: the dead node's IP, the Address of its DN row.
	ReplaceAddress string `json:"replaceAddress,omitempty"`
	FirstBoot      bool   `json:"firstBoot,omitempty"`
	// ResetBootstrapProgress is -Dcassandra.reset_bootstrap_progress=<v>; nil when unset
	// (5.0 then refuses to reuse earlier streamed data, §4.6).
	ResetBootstrapProgress *bool `json:"resetBootstrapProgress,omitempty"`
	// Seeds is the node's seed list (addresses): a seed does not bootstrap (R3).
	Seeds []string `json:"seeds,omitempty"`
	// NoAutoBootstrap is auto_bootstrap: false (R3).
	NoAutoBootstrap bool `json:"noAutoBootstrap,omitempty"`
}

// StartFresh starts a node on an empty data directory in spec.Pod, with f in place and
// the JVM options opts: a new pod, or an existing pod whose data volume was replaced.
// In that case its previous node is not forgotten: if it was a ring member (or an
// announced replacement) peers keep it in gossip, down, with no pod (Endpoints lists it
// Detached), which is what a replacement of it finds. Without a replace address the
// node bootstraps like AddNode's; with one it replaces (replace.go). A startup error
// makes the JVM exit 3 (NodeView.ExitCode, Log); Restart runs the same start again. An
// empty spec.HostID gets a new one (a fresh data dir), not the one derived from the pod.
func (s *Store) StartFresh(spec NodeSpec, f Fault, opts StartOptions) error {
	return s.update(func(st *state, now time.Time) error {
		if _, err := spec.withDefaults(st.Options); err != nil {
			return err
		}
		if f.StreamFailures < 0 || f.Slow < 0 || f.RebuildFailures < 0 {
			return errors.New("sim: negative fault value")
		}
		if spec.HostID == "" {
			// A fresh data dir gets a new host ID, not the pod's previous one.
			st.Seq++
			seed := fmt.Sprintf("%s/%d", spec.Pod, st.Seq)
			spec.HostID = uuidFrom(hash64("host:"+seed), hash64("id:"+seed), 4)
		}
		if old, err := st.node(spec.Pod); err == nil {
			st.detach(old, now)
		}
		if err := st.addNode(spec, now); err != nil {
			return err
		}
		n := st.Nodes[len(st.Nodes)-1]
		n.StartedAt, n.Fault, n.Flags, n.Boot = now, f, opts, bootNeeds
		if f.Down {
			n.DownAt = now // the container waits; clearing Down starts it
			return nil
		}
		st.boot(n, now)
		return nil
	})
}

// RestartWith restarts pod's JVM on its data dir with new JVM options, kept for later
// restarts (Restart's semantics otherwise).
func (s *Store) RestartWith(pod string, opts StartOptions) error {
	return s.update(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		n.Flags = opts
		n.Fault.Down = false
		st.startJVM(n, now)
		return nil
	})
}

// boot is what the JVM does with its flags and data dir once started (§4.1): replace
// when a replace address is set (unless _first_boot on a bootstrapped node), restart
// when bootstrapped, else bootstrap as a new node.
func (st *state) boot(n *node, now time.Time) {
	o, f := st.Options, n.Flags
	n.Log, n.Exit = nil, 0
	firstBootDone := f.ReplaceAddress != "" && f.FirstBoot && n.Boot == bootCompleted
	if firstBootDone {
		n.logAt(now, "INFO", srcFirstBootDone, o, msgFirstBootDone(o))
	}
	switch {
	case f.ReplaceAddress != "" && !firstBootDone:
		st.startReplacement(n, now)
	case n.Boot == bootCompleted:
		// A restart: start() already brought the node back.
	default:
		st.startBootstrap(n, now)
	}
}

// startBootstrap is a node with no (finished) data and no replace flag: a new node with
// its own tokens (§4.2 "Without any replace flag"), refused on an address that a ring
// member still holds (isSafeForStartup: NORMAL or shutdown there).
func (st *state) startBootstrap(n *node, now time.Time) {
	n.Repl, n.TokenSeed = nil, ""
	if other := st.inGossip(n.Spec.Address, n, now); other != nil && other.member() {
		st.crash(n, now, ruleCollision, msgCollision(st.Options, n.Spec.Address))
		return
	}
	n.Boot = bootInProgress
	if st.Options.JoinTime > 0 || st.Options.metered() {
		n.Joining, n.JoinStart, n.Mode = true, now, ModeJoining
		n.StatusVersion++
		st.startJoinRates(n, now)
		return
	}
	n.Mode, n.Boot = ModeNormal, bootCompleted
}

// detach takes n out of its pod (the pod starts on a fresh data dir): its JVM is gone.
// Peers keep a ring member (or an announced replacement) in gossip; anything else is
// forgotten.
func (st *state) detach(n *node, now time.Time) {
	if n.jvmUp() {
		st.jvmStopped(n, now)
	}
	n.Fault.Down, n.Detached = true, true
	announced := n.Repl != nil && !n.Repl.Announced.IsZero()
	if !announced && !n.member() {
		st.forget(n)
	}
}

// jvmStopped is everything a JVM takes with it when it stops: its decommission, the
// streams it sends or receives, the removals it coordinates.
func (st *state) jvmStopped(n *node, at time.Time) {
	n.DownAt = at
	n.abort(at)
	st.abortRebuild(n, at)
	st.endPlansOf(n, at)
	st.abortRemovals(n, at)
}

// forget drops n from the state: nobody knows it any more.
func (st *state) forget(n *node) {
	for i, p := range st.Nodes {
		if p == n {
			st.Nodes = append(st.Nodes[:i], st.Nodes[i+1:]...)
			return
		}
	}
}

// byHostID is the node with that host ID other than except (a same-address replacement
// shares it with the node it replaces).
func (st *state) byHostID(id string, except *node) *node {
	for _, p := range st.Nodes {
		if p != except && p.Spec.HostID == id {
			return p
		}
	}
	return nil
}
