// Package nodetool runs Cassandra's nodetool in a pod and parses what it prints.
//
// The parsers accept the real formats of Cassandra 3.11, 4.0, 4.1 and 5.0
// (fixed-width printf rows, TableBuilder rows with trailing spaces, comma decimal
// separators, several datacenters). An output they cannot read is an error, never an
// empty answer: callers treat an unreadable ring as "unknown", not as "node left".
package nodetool

import (
	"errors"
	"net/netip"
)

// ErrEmpty is returned when nodetool printed nothing usable (no datacenter, no row).
var ErrEmpty = errors.New("nodetool printed no ring")

// Node is one row of `nodetool status`.
type Node struct {
	DC      string `json:"dc"`
	Rack    string `json:"rack"`
	Status  string `json:"status"` // "U", "D" or "?"
	State   string `json:"state"`  // "N", "L", "J" or "M"
	Address string `json:"address"`
	Load    string `json:"load"`   // as printed, e.g. "1.2 GiB", "?"
	Tokens  int    `json:"tokens"` // 0 in the single-token layout
	Owns    string `json:"owns"`   // as printed, e.g. "50.0%", "?"
	HostID  string `json:"hostID"` // "" when nodetool printed null / an empty cell
	Token   string `json:"token,omitempty"`
}

// Code is the two-letter state as nodetool prints it, e.g. "UN".
func (n Node) Code() string { return n.Status + n.State }

// Ring is a parsed `nodetool status`.
type Ring struct {
	Nodes []Node   `json:"nodes"`
	Notes []string `json:"notes,omitempty"`
}

// ByHostID finds a node by its Host ID.
func (r Ring) ByHostID(id string) (Node, bool) {
	for _, n := range r.Nodes {
		if id != "" && n.HostID == id {
			return n, true
		}
	}
	return Node{}, false
}

// ByAddress finds a node by its address, compared as parsed IP addresses: Cassandra
// prints IPv6 in full (fd00:10:244:1:0:0:0:5, InetAddress.getHostAddress) where the
// kubelet writes the short form (fd00:10:244:1::5).
func (r Ring) ByAddress(addr string) (Node, bool) {
	for _, n := range r.Nodes {
		if SameAddress(n.Address, addr) {
			return n, true
		}
	}
	return Node{}, false
}

// SameAddress reports whether two printed addresses name the same IP: parsed when both
// parse (IPv4-mapped IPv6 counts as its IPv4, an IPv6 zone is ignored), else compared as
// text. An empty address matches nothing.
func SameAddress(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	pa, ea := netip.ParseAddr(a)
	pb, eb := netip.ParseAddr(b)
	if ea != nil || eb != nil {
		return a == b
	}
	return pa.Unmap().WithZone("") == pb.Unmap().WithZone("")
}

// Mode is StorageService's operation mode, the first line of `nodetool netstats`.
type Mode string

// The operation modes of Cassandra 3.11 to 5.0 (5.0 adds the *_FAILED ones).
const (
	ModeStarting           Mode = "STARTING"
	ModeNormal             Mode = "NORMAL"
	ModeJoining            Mode = "JOINING"
	ModeJoiningFailed      Mode = "JOINING_FAILED"
	ModeLeaving            Mode = "LEAVING"
	ModeDecommissioned     Mode = "DECOMMISSIONED"
	ModeDecommissionFailed Mode = "DECOMMISSION_FAILED"
	ModeMoving             Mode = "MOVING"
	ModeDraining           Mode = "DRAINING"
	ModeDrained            Mode = "DRAINED"
)

// Netstats is the part of `nodetool netstats` the plugin needs.
type Netstats struct {
	Mode Mode `json:"mode"`
	// Streaming is true when at least one stream plan is listed (e.g. "Unbootstrap <id>").
	Streaming bool `json:"streaming"`
	// Streams are the sessions' summary lines, one per peer and direction.
	Streams []StreamSummary `json:"streams,omitempty"`
}

// StreamSummary is one session's "Sending|Receiving N files, M bytes total. Already …"
// line under a stream plan and a peer.
type StreamSummary struct {
	Plan       string `json:"plan"`   // description, e.g. "Unbootstrap"
	PlanID     string `json:"planID"` // the plan's UUID
	Peer       string `json:"peer"`   // "/10.244.1.13" (":port" with -pp)
	Direction  string `json:"direction"`
	Files      int64  `json:"files"`
	TotalBytes int64  `json:"totalBytes"`
	FilesDone  int64  `json:"filesDone"`
	DoneBytes  int64  `json:"doneBytes"`
}

// StreamTotals are the summed bytes of a plan's sessions in one direction.
type StreamTotals struct {
	DoneBytes  int64 `json:"doneBytes"`
	TotalBytes int64 `json:"totalBytes"`
	Peers      int   `json:"peers"`
}

// Info is the part of `nodetool info` the plugin needs.
type Info struct {
	ID                 string `json:"id"`
	GossipActive       bool   `json:"gossipActive"`
	NativeActive       bool   `json:"nativeTransportActive"`
	Load               string `json:"load"`
	DC                 string `json:"dc"`
	Rack               string `json:"rack"`
	BootstrapState     string `json:"bootstrapState,omitempty"` // 5.0 only
	Decommissioning    *bool  `json:"decommissioning,omitempty"`
	DecommissionFailed *bool  `json:"decommissionFailed,omitempty"`
}

// Keyspace is one line of describecluster's "Keyspaces:" section (4.0+).
type Keyspace struct {
	Name    string            `json:"name"`
	Class   string            `json:"class"`
	Options map[string]string `json:"options,omitempty"`
}

// ClusterDescription is a parsed `nodetool describecluster`.
type ClusterDescription struct {
	Name           string              `json:"name"`
	SchemaVersions map[string][]string `json:"schemaVersions"`
	// HasStats is false on 3.11, which prints no "Stats for all nodes" section.
	HasStats    bool       `json:"hasStats"`
	Live        int        `json:"live"`
	Joining     int        `json:"joining"`
	Moving      int        `json:"moving"`
	Leaving     int        `json:"leaving"`
	Unreachable int        `json:"unreachable"`
	Keyspaces   []Keyspace `json:"keyspaces,omitempty"`
}

// Outcome classifies what a `nodetool decommission` call printed.
type Outcome string

// Decommission outcomes. Only OutcomeRefused and OutcomeFailed are conclusive about the
// call; every other outcome must be followed by a read of the node's state.
const (
	// OutcomeReturned: exit 0 with no output (3.11/4.x success, or a returned call).
	OutcomeReturned Outcome = "returned"
	// OutcomeRunning: a decommission is already running on the node (4.x exit 1, 5.0 exit 0).
	OutcomeRunning Outcome = "already-running"
	// OutcomeAlreadyDone: 5.0 "Node was already decommissioned." or 3.11/4.x
	// "local node is not a member of the token ring yet" (also printed while joining).
	OutcomeAlreadyDone Outcome = "already-decommissioned"
	// OutcomeRefused: Cassandra refused before starting (RF check, last node, drained,
	// pending ranges, --force on 3.11). The node did not start leaving.
	OutcomeRefused Outcome = "refused"
	// OutcomeFailed: the decommission started and failed (stream failure, interrupted).
	OutcomeFailed Outcome = "failed"
	// OutcomeUnreachable: nodetool could not connect to JMX (Cassandra down or starting).
	OutcomeUnreachable Outcome = "unreachable"
	// OutcomeUnknown: the exec broke, timed out or printed something unrecognised.
	OutcomeUnknown Outcome = "unknown"
)

// addressKey is an address in one spelling (parsed when it parses), for duplicate checks.
func addressKey(a string) string {
	if p, err := netip.ParseAddr(a); err == nil {
		return p.Unmap().WithZone("").String()
	}
	return a
}
