// Package sim simulates the nodetool of a small Cassandra cluster, for the plugin's unit
// tests (in memory, with an injectable clock) and its e2e harness (a JSON state file shared
// by many nodetool-sim processes).
//
// The output formats, exit codes, streams and decommission semantics follow
// docs/how-it-works/nodetool.md (Cassandra 3.11, 4.0, 4.1 and 5.0): byte-exact status/netstats/info/
// describecluster layouts, the error catalogue (E1–E15) and the node state machine (§7).
// The stream throughput commands and metered streaming follow docs/how-it-works/streaming.md §1.
//
// Replacing a dead node (-Dcassandra.replace_address[_first_boot], start.go, replace.go)
// and `nodetool removenode` (removenode.go) follow docs/how-it-works/replace.md: startup
// errors with exit 3 and the container log (log.go), per-viewer rings (view.go), and
// multi-source stream plans (plans.go).
//
// `nodetool rebuild` and the management API's rebuild job (rebuild.go, mgmtapi.go)
// fetch a node's ranges from a source DC in one session per source node, keeping what
// completed sessions brought (system.available_ranges) across failures and reruns.
//
// Each keyspace has its own replication per DC (keyspaces.go), which describecluster,
// status's ownership, the 4.0+ RF check and the replacement/removal sources read; cqlsh
// (RunCQL: cql.go, cql_exec.go, cql_replication.go) reads and alters it, with the
// schema version spreading to the other nodes over Options.SchemaAgreeTime.
//
// The state of a decommission is a function of the clock: starting one records its start
// time, and every reader derives the node's phase from "now". That is what makes the
// simulated decommission keep going when the process that asked for it dies, exactly like
// the server-side operation behind a killed `kubectl exec … nodetool decommission`. The
// same holds for replacements and removals.
package sim

import (
	"fmt"
	"time"
)

// Supported Cassandra versions (Options.Version).
const (
	V311 = "3.11"
	V40  = "4.0"
	V41  = "4.1"
	V50  = "5.0"
)

// Operation modes (the `Mode:` line of netstats) the simulator can be in.
const (
	ModeNormal             = "NORMAL"
	ModeLeaving            = "LEAVING"
	ModeDecommissioned     = "DECOMMISSIONED"
	ModeDecommissionFailed = "DECOMMISSION_FAILED"
	// ModeStarting is never entered (a restart is instantaneous); netstats renders it
	// like nodetool does, without the statistics section.
	ModeStarting = "STARTING"
	// ModeJoining: a node added with Options.JoinTime > 0 bootstraps for that long (peers
	// show it UJ), then turns NORMAL. ModeJoiningFailed is 5.0's mode when the join fails
	// (Fault.JoinFails); 3.11/4.x stay JOINING.
	ModeJoining       = "JOINING"
	ModeJoiningFailed = "JOINING_FAILED"
	// ModeDrained: after `nodetool drain` (peers show the node DN) until the JVM restarts.
	ModeDrained = "DRAINED"
)

// Exit codes of nodetool (docs/how-it-works/nodetool.md §1) and of a killed client.
const (
	ExitOK      = 0
	ExitUsage   = 1 // usage errors, refusals (IllegalState/IllegalArgument), connect failures
	ExitFailure = 2 // any other Throwable: "error: …" + stack trace on stderr
	// ExitKilled is what Run returns when its context is cancelled mid-command: the
	// nodetool JVM was killed (SIGTERM → 143). The simulated server-side work goes on.
	ExitKilled = 143
)

// Options describes the simulated cluster as a whole. Zero values get the defaults noted
// on each field.
type Options struct {
	// Version is "3.11", "4.0", "4.1" or "5.0"; it picks every format and rule.
	Version string `json:"version"`
	// DecommissionTime is how long a successful decommission takes in total
	// (0 = instant). A real one is ≥ 60 s plus streaming (docs/how-it-works/nodetool.md §10).
	DecommissionTime time.Duration `json:"decommissionTime"`
	// LeftAnnounce is the final part of DecommissionTime during which peers no longer list
	// the node while it still reports LEAVING (docs/how-it-works/nodetool.md §6.2 step 8). 0 means
	// DecommissionTime/3; a negative value means no such window.
	LeftAnnounce time.Duration `json:"leftAnnounce"`
	// RF is the initial replication factor, in every DC that has nodes, of
	// system_auth, system_distributed, system_traces and the user keyspaces
	// (NetworkTopologyStrategy; Replication overrides it per keyspace, ALTER KEYSPACE
	// through cqlsh changes it, keyspaces.go). Each keyspace's RF in a DC drives the
	// 4.0+ RF check (E1: refused when N <= RF), Owns (min(100%, RF/N)) and
	// describecluster. Default 3.
	RF int `json:"rf"`
	// ClusterName is describecluster's Name. Default "demo".
	ClusterName string `json:"clusterName,omitempty"`
	// ReleaseVersion is the full version printed by `version`, describecluster and
	// gossipinfo. Default: 3.11.11, 4.0.13, 4.1.6 or 5.0.3 (the refs docs/how-it-works/nodetool.md used).
	ReleaseVersion string `json:"releaseVersion,omitempty"`
	// Keyspaces are the user keyspaces (NTS, RF per DC). Default ["app"].
	Keyspaces []string `json:"keyspaces,omitempty"`
	// Replication gives keyspaces (system_auth, system_distributed, system_traces or one
	// of Keyspaces) their initial replication map, DC → replicas, in place of RF in
	// every DC that has nodes. A DC absent from a map gets no replica.
	Replication map[string]map[string]int `json:"replication,omitempty"`
	// SchemaAgreeTime is how long, after an ALTER KEYSPACE through cqlsh, the other
	// nodes keep the previous schema version (describecluster then lists two). 0
	// (default): they agree at once.
	SchemaAgreeTime time.Duration `json:"schemaAgreeTime,omitempty"`
	// CQLAuth, when set, makes every node's native transport require these credentials
	// (PasswordAuthenticator): cqlsh must get them from its cqlshrc (see RunCQL).
	CQLAuth *JMXAuth `json:"cqlAuth,omitempty"`
	// MixedReplication makes user keyspaces have different replication settings (those
	// after the first replicate RF-1 times, at least once; a keyspace "mixed" is added
	// when Keyspaces has fewer than two), so a plain `status` has no effective
	// ownership: header "Owns", cells "?" and the "Non-system keyspaces don't have the
	// same replication settings" note. The same follows from Replication or an ALTER.
	MixedReplication bool `json:"mixedReplication,omitempty"`
	// JoinTime is how long a node added by AddNode bootstraps (mode JOINING, peers UJ)
	// before it is NORMAL. 0 (default) = it joins at once, as before.
	JoinTime time.Duration `json:"joinTime,omitempty"`
	// JMX, when set, makes every node refuse nodetool without these credentials (see
	// authenticate in jmx.go).
	JMX *JMXAuth `json:"jmx,omitempty"`
	// StreamTimeScale > 0 meters streaming (transfer.go): a decommission streams the
	// leaving node's Load, a bootstrap the joining node's, at the sender's stream
	// throughput (the cassandra.yaml default, 200 megabits/s before 4.1 and 24MiB/s
	// from 4.1, until setstreamthroughput changes it; a restart resets it), capped by
	// HardwareRate, and StreamTimeScale times faster than real time: at 100, 1 GiB at
	// 24 MiB/s takes 0.43 s. DecommissionTime then only gives the waits around the
	// streaming (its RING_DELAY-like start and LeftAnnounce window), JoinTime the wait
	// before a bootstrap streams, and every added node bootstraps. 0 (default): the
	// fixed timings above.
	StreamTimeScale float64 `json:"streamTimeScale,omitempty"`
	// HardwareRate is the most a node sends, in bytes/s (disk and network): the rate of
	// an unthrottled stream and the cap of a higher throttle. Metered streaming only;
	// default 256 MiB/s (an assumption, not a Cassandra figure).
	HardwareRate float64 `json:"hardwareRate,omitempty"`
	// RebuildTime is how long an unmetered rebuild streams (every session takes it; 0,
	// the default: it ends at once). Metered, a rebuild's sessions move at their
	// senders' rates instead (rebuild.go).
	RebuildTime time.Duration `json:"rebuildTime,omitempty"`
	// ExecCost is charged, in real time, before every nodetool invocation answers (a
	// real one starts a JVM, about 1.5 s), and each invocation is counted
	// (NodeView.Execs). 0 (default): free and not counted. The nodetool-sim binary's
	// NODETOOL_SIM_EXEC_COST overrides it (Store.SetExecCost).
	ExecCost time.Duration `json:"execCost,omitempty"`
}

// NodeSpec is one Cassandra node (one pod).
type NodeSpec struct {
	Pod     string `json:"pod"`
	HostID  string `json:"hostID"`  // UUID; derived from Pod when empty
	Address string `json:"address"` // IPv4 the node gossips with
	DC      string `json:"dc"`      // default "dc1"
	Rack    string `json:"rack"`    // default "rack1"
	// Load is the data size as nodetool prints it ("1.2 GiB") or an exact byte count
	// ("1299441040 bytes"). Default "1 GiB". It grows on the remaining nodes of the DC when
	// a node leaves (its load is shared equally among them).
	Load string `json:"load"`
	// Tokens is num_tokens. Default 16 on 4.0+ and 256 on 3.11.
	Tokens int `json:"tokens"`
	// Token is the node's first token (the single-token status layout, `info` with one
	// token, gossip STATUS). Derived from the host ID when empty.
	Token string `json:"token,omitempty"`
	// UncompressedLoad is 5.0's `info` "Uncompressed load". Default: Load.
	UncompressedLoad string `json:"uncompressedLoad,omitempty"`
}

// Fault is what can go wrong on one node. SetFault replaces the whole set.
type Fault struct {
	// RefuseRF (4.0+) refuses decommission with the E1 text (stdout, exit 1); 5.0 also
	// leaves mode DECOMMISSION_FAILED. No effect on 3.11 (no RF check) nor with --force.
	// The real RF check (N <= RF) applies regardless; this forces it.
	RefuseRF bool `json:"refuseRF,omitempty"`
	// StreamFailures makes the next N decommission attempts fail half-way through
	// streaming: E11 on stderr, exit 2. 3.11/4.x stay LEAVING (peers UL), 5.0 goes to
	// DECOMMISSION_FAILED (peers still UL). It counts down as attempts consume it.
	StreamFailures int `json:"streamFailures,omitempty"`
	// Down means the Cassandra JVM is not running: nodetool on the pod prints the E10
	// connect error (stderr, exit 1) and peers show it DN (DL if it was leaving). Setting
	// it kills a running decommission (the JVM died); clearing it starts the JVM again,
	// with Restart's semantics.
	Down bool `json:"down,omitempty"`
	// Slow makes every nodetool command on the pod sleep this long before answering.
	Slow time.Duration `json:"slow,omitempty"`
	// Garbled makes status/netstats on the pod print garbage (a truncated row, stray
	// bytes) with exit 0.
	Garbled bool `json:"garbled,omitempty"`
	// EmptyRing makes status on the pod print nothing at all, exit 0.
	EmptyRing bool `json:"emptyRing,omitempty"`
	// JoinFails makes a joining node's bootstrap fail when its JoinTime is up: 5.0 goes
	// to JOINING_FAILED, 3.11/4.x stay JOINING (peers UJ) forever. Clearing it lets the
	// join complete.
	JoinFails bool `json:"joinFails,omitempty"`
	// HoldStreaming keeps a running decommission of the node streaming (LEAVING, peers
	// UL) for as long as it is set, whatever the clock says: a test acts in that window
	// without racing the clock. Once cleared, the attempt goes on as if its streaming
	// had just begun. It is a test's lever, not a state real Cassandra reports.
	HoldStreaming bool `json:"holdStreaming,omitempty"`
	// FailedWhileLeaving (5.0) makes the node's mode read DECOMMISSION_FAILED (netstats,
	// info's "Decommission failed") while a decommission of it still runs: it goes on
	// streaming, peers see it UL, and it ends DECOMMISSIONED as usual. It is the state
	// of CASSANDRA-21493 and CASSANDRA-21583, where the mode is set to
	// DECOMMISSION_FAILED under a decommission that goes on; a caller must not take the
	// mode alone for a failure. No effect before 5.0 (no such mode).
	FailedWhileLeaving bool `json:"failedWhileLeaving,omitempty"`
	// RebuildFailures makes the node's next N rebuilds fail: the session from its first
	// source breaks half-way, the others complete (their ranges become available), and
	// the call fails with "Error while rebuilding node: Stream failed" (stderr, exit 2).
	// It counts down as rebuilds consume it.
	RebuildFailures int `json:"rebuildFailures,omitempty"`
}

// NodeView is the effective state of one node at the moment Node was called.
type NodeView struct {
	Pod, HostID, Address, DC, Rack string
	// Load as status prints it (grows when peers leave).
	Load string
	// Mode is the operation mode (netstats line 1) the JVM has, or last had when it is
	// not running: NORMAL, LEAVING, DECOMMISSION_FAILED or DECOMMISSIONED.
	Mode string
	// PeerCode is the node's row code in other nodes' status: "UN", "UL", "DN", "DL", or
	// "" when peers no longer list it (LEFT announced, decommissioned).
	PeerCode string
	// Decommissioning is true while a decommission attempt runs (5.0 info
	// "Decommissioning"), including the final announce window.
	Decommissioning bool
	// Streaming is true while the attempt is in its streaming phase (netstats shows an
	// Unbootstrap plan).
	Streaming bool
	// Left is true once the node announced LEFT (peers dropped it).
	Left bool
	// Running is false when the JVM is down (Fault.Down) or refused to start (Gone).
	Running bool
	// Gone is true when the node was restarted after DECOMMISSIONED and refused to
	// start (E4): nodetool on it fails to connect from then on.
	Gone bool
	// DecommissionsStarted counts attempts that actually started leaving (including
	// retries and 3.11 duplicates).
	DecommissionsStarted int
	// DecommissionCalls counts every `nodetool decommission` invocation on the pod,
	// whatever its outcome (refused, usage error, connect error, duplicate…).
	DecommissionCalls int
	// Joining is true while the node bootstraps (peers show UJ) or replaces (Replacing).
	Joining bool
	// Drains counts drains that took effect; Cleanups successful `nodetool cleanup`s;
	// Restarts the JVM starts after the initial one (Restart, Down cleared).
	Drains, Cleanups, Restarts int
	// Fault is the node's current fault set (StreamFailures counts down).
	Fault Fault
	// Execs counts the nodetool invocations on the pod while Options.ExecCost > 0.
	Execs int
	// Throughput is what each of the node's stream limiters lets through now.
	Throughput Throughputs
	// Tokens is how many tokens the node owns (a replacement: the replaced node's).
	Tokens int
	// Bootstrap is system.local's bootstrap state: COMPLETED, IN_PROGRESS,
	// NEEDS_BOOTSTRAP or DECOMMISSIONED.
	Bootstrap string
	// Replacing is the address the node replaces while its replacement runs (started
	// with a replace address, not NORMAL yet); ReplaceFailed once its stream failed.
	Replacing     string
	ReplaceFailed bool
	// ExitCode is 3 once the JVM exited on a startup error (Running is then false);
	// StartupError is the line it printed ("Exception (…) encountered during startup: …").
	ExitCode     int
	StartupError string
	// Detached: no pod runs the node any more; peers still know it (Endpoints).
	Detached bool
	// Removed: removenode excised it from the ring.
	Removed bool
	// Rebuilding: a rebuild of the node streams; RebuildsStarted counts the rebuilds
	// that passed their checks (refused ones aside).
	Rebuilding      bool
	RebuildsStarted int
}

// Throughputs are a node's stream limiters in bytes/s: +Inf when unthrottled (0), 0
// for the entire-SSTable ones before 4.1, which has none (docs/how-it-works/streaming.md §1).
type Throughputs struct {
	Stream, InterDC, EntireSSTable, EntireSSTableInterDC float64
}

func (o Options) withDefaults() (Options, error) {
	switch o.Version {
	case V311, V40, V41, V50:
	default:
		return o, fmt.Errorf("sim: unsupported Cassandra version %q (want 3.11, 4.0, 4.1 or 5.0)", o.Version)
	}
	if o.DecommissionTime < 0 {
		return o, fmt.Errorf("sim: negative DecommissionTime")
	}
	if o.JoinTime < 0 {
		return o, fmt.Errorf("sim: negative JoinTime")
	}
	if o.StreamTimeScale < 0 || o.HardwareRate < 0 || o.ExecCost < 0 || o.SchemaAgreeTime < 0 || o.RebuildTime < 0 {
		return o, fmt.Errorf("sim: negative StreamTimeScale, HardwareRate, ExecCost, SchemaAgreeTime or RebuildTime")
	}
	if o.metered() && o.HardwareRate == 0 {
		o.HardwareRate = 256 * mib
	}
	switch {
	case o.RF == 0:
		o.RF = 3
	case o.RF < 0:
		return o, fmt.Errorf("sim: negative RF")
	}
	if o.ClusterName == "" {
		o.ClusterName = "demo"
	}
	if o.ReleaseVersion == "" {
		o.ReleaseVersion = map[string]string{V311: "3.11.11", V40: "4.0.13", V41: "4.1.6", V50: "5.0.3"}[o.Version]
	}
	if o.Keyspaces == nil {
		o.Keyspaces = []string{"app"}
	}
	if o.MixedReplication && o.RF > 1 {
		for i := 0; len(o.Keyspaces) < 2; i++ {
			o.Keyspaces = append(o.Keyspaces[:len(o.Keyspaces):len(o.Keyspaces)], fmt.Sprintf("mixed%d", i))
		}
	}
	return o, nil
}

func (o Options) is311() bool { return o.Version == V311 }
func (o Options) is50() bool  { return o.Version == V50 }

// timeline splits a successful attempt: a RING_DELAY-like wait, streaming, then the
// announce window in which peers have dropped the node (all offsets from its start).
type timeline struct {
	streamStart, left, done, failAt time.Duration
}

func (o Options) timeline() timeline {
	d := o.DecommissionTime
	l := o.LeftAnnounce
	switch {
	case l == 0:
		l = d / 3
	case l < 0:
		l = 0
	}
	if l > d {
		l = d
	}
	left := d - l
	// Real Cassandra sleeps RING_DELAY (the same 30 s as the announce window) before
	// streaming; cap it so some streaming time remains.
	pre := min(l, left/2)
	return timeline{
		streamStart: pre,
		left:        left,
		done:        d,
		// "half-way": the middle of the streaming phase.
		failAt: pre + (left-pre)/2,
	}
}

func (spec NodeSpec) withDefaults(o Options) (NodeSpec, error) {
	if spec.Pod == "" {
		return spec, fmt.Errorf("sim: node without Pod")
	}
	if spec.Address == "" {
		return spec, fmt.Errorf("sim: node %s without Address", spec.Pod)
	}
	if spec.HostID == "" {
		spec.HostID = uuidFrom(hash64("host:"+spec.Pod), hash64("id:"+spec.Pod), 4)
	}
	if spec.DC == "" {
		spec.DC = "dc1"
	}
	if spec.Rack == "" {
		spec.Rack = "rack1"
	}
	if spec.Load == "" {
		spec.Load = "1 GiB"
	}
	if _, err := parseSize(spec.Load); err != nil {
		return spec, fmt.Errorf("sim: node %s: %w", spec.Pod, err)
	}
	if spec.UncompressedLoad != "" {
		if _, err := parseSize(spec.UncompressedLoad); err != nil {
			return spec, fmt.Errorf("sim: node %s: %w", spec.Pod, err)
		}
	}
	if spec.Tokens == 0 {
		spec.Tokens = 16
		if o.is311() {
			spec.Tokens = 256
		}
	}
	if spec.Tokens < 0 {
		return spec, fmt.Errorf("sim: node %s: negative Tokens", spec.Pod)
	}
	if spec.Token == "" {
		spec.Token = fmt.Sprint(int64(hash64("token:" + spec.HostID)))
	}
	return spec, nil
}

// uuidFrom formats two 64-bit values as a UUID string of the given version (variant 2).
func uuidFrom(hi, lo uint64, version int) string {
	hi = hi&^0xf000 | uint64(version)<<12
	lo = lo&^(0xc<<60) | 0x8<<60
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", hi>>32, (hi>>16)&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff)
}

// timeUUID builds a version-1 UUID like Cassandra's TimeUUID stream plan ids: the
// timestamp comes from the attempt's start, clock sequence and node from seed.
func timeUUID(t time.Time, seed string) string {
	// 100-ns intervals since 1582-10-15.
	const gregorianOffset = 0x01B21DD213814000
	ts := uint64(t.UnixNano()/100) + gregorianOffset
	timeLow := ts & 0xffffffff
	timeMid := (ts >> 32) & 0xffff
	timeHi := (ts >> 48) & 0x0fff
	h := hash64(seed)
	clockSeq := (h>>48)&0x3fff | 0x8000
	node := h & 0xffffffffffff
	return fmt.Sprintf("%08x-%04x-1%03x-%04x-%012x", timeLow, timeMid, timeHi, clockSeq, node)
}

func validPodSet(nodes []NodeSpec) error {
	seen := map[string]bool{}
	for _, n := range nodes {
		if seen[n.Pod] {
			return fmt.Errorf("sim: duplicate pod %q", n.Pod)
		}
		seen[n.Pod] = true
	}
	return nil
}
