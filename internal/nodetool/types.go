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

	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
)

// ErrEmpty is returned when nodetool printed nothing usable (no datacenter, no row).
var ErrEmpty = errors.New("nodetool printed no ring")

// Netstats is the part of `nodetool netstats` the plugin needs.
type Netstats struct {
	Mode pub.Mode `json:"mode"`
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
