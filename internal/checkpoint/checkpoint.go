// Package checkpoint is the durable record of an operation in flight: the plan, and per
// step what was attempted. It lives in one annotation on the cluster resource, so any
// machine can resume the operation. It records what was planned and attempted, never
// whether a step is done: that is always asked of the real world.
package checkpoint

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Annotation keys on the cluster resource.
const (
	// Annotation holds the checkpoint of the operation in flight.
	Annotation = "kubectl-cassandra.io/checkpoint"
	// LastOperationAnnotation holds a short record of the last finished operation.
	LastOperationAnnotation = "kubectl-cassandra.io/last-operation"
)

// SchemaVersion is the newest checkpoint format this build writes and reads. Version 1
// knew only scale-downs; version 2 adds the other operation kinds (scale-up, restart,
// repair-operator-state), their step kinds and nodes the operation creates (New). A
// checkpoint is written with the oldest version that can hold it (its kind's
// Schema.Version), so a scale-down stays readable by older plugins; version 1
// checkpoints are still read.
// Version 3 is an envelope around a version 1 or 2 checkpoint whose JSON is large: it
// is stored gzip-compressed (see compressAbove), and a build that reads only up to
// version 2 says "upgrade the plugin" instead of "corrupt".
const SchemaVersion = 3

// schemaEnvelope is the version of the compressed envelope; newestPlain the newest
// version of a checkpoint itself.
const (
	schemaEnvelope = 3
	newestPlain    = 2
)

// EncodingGzip is the envelope's encoding: the checkpoint's JSON, gzip-compressed, in
// standard base64.
const EncodingGzip = "gzip+base64"

// compressAbove: a checkpoint whose JSON is larger is written compressed. Every step
// rewrites the whole annotation, and the API server's time for a write grows with the
// object (a 100-node scale-down's plan is about 100 KiB of JSON, which compresses about
// tenfold); annotations are also limited to 256 KiB in all. Smaller plans stay plain
// JSON, readable with kubectl get -o yaml.
const compressAbove = 32 << 10

// maxInflated bounds what a compressed checkpoint may inflate to (a broken or hostile
// annotation must not exhaust memory).
const maxInflated = 32 << 20

type envelope struct {
	SchemaVersion int    `json:"schemaVersion"`
	Encoding      string `json:"encoding"`
	Data          string `json:"data"`
}

// KindScaleDown is the scale-down's kind: schema 1 checkpoints name no kind and are
// scale-downs. Every other kind names itself in its package (internal/operation/...).
const KindScaleDown = "scale-down"

// Schema is what a checkpoint of one operation kind may hold; decode refuses anything
// else. The checkpoint knows no kind itself: each kind's package says its Schema in its
// Info (internal/operation/*), and the registry hands them all to decode
// (operation.Registry.Schemas), so a new kind is written nowhere here.
type Schema struct {
	// Version is the oldest schema version that can hold the kind (a checkpoint is
	// written with it, so older plugins can still read what they know).
	Version int
	// Steps are the step kinds its checkpoint may contain.
	Steps []string
	// NewNodes: it plans nodes it creates (Node.New; a scale-up).
	NewNodes bool
	// Unowned: it finishes what the operator left, so its planned nodes may have no pod
	// (no pod UID) and its target no node count (repair-operator-state).
	Unowned bool
}

// Schemas are the operation kinds a build knows, by name.
type Schemas map[string]Schema

// Step kinds of a scale-down, in the order they run for each node.
const (
	StepDecommission  = "decommission"
	StepVerifyLeft    = "verify-left"
	StepShrinkSTS     = "shrink-statefulset"
	StepWaitPodGone   = "wait-pod-gone"
	StepDeletePVCs    = "delete-pvcs"
	StepUpdateCluster = "update-cluster"
	// StepPauseOperator scales the operator's Deployment to 0 before anything else, and
	// StepResumeOperator restores its recorded replicas after the cluster resource and the
	// StatefulSets agree.
	StepPauseOperator  = "pause-operator"
	StepResumeOperator = "resume-operator"
)

// Step kinds of the schema 2 operations (scale-up, restart, repair-operator-state).
const (
	// StepGrowSTS grows the rack's StatefulSet by one replica (scale-up).
	StepGrowSTS = "grow-statefulset"
	// StepWaitJoined waits until the new pod is Ready and its node UN (scale-up).
	StepWaitJoined = "wait-joined"
	// StepCleanup runs nodetool cleanup on a pre-existing node (scale-up --cleanup). Its
	// effect cannot be observed: it is done only once recorded done.
	StepCleanup = "cleanup"
	// StepDrain, StepDeletePod and StepWaitRestarted restart one pod (restart).
	StepDrain         = "drain"
	StepDeletePod     = "delete-pod"
	StepWaitRestarted = "wait-restarted"
	// StepOperatorStatus marks the operator's stuck pod operation done in the cluster
	// resource's status (repair-operator-state).
	StepOperatorStatus = "operator-status"
)

// Step states. "started" means the action may or may not have happened: resume asks
// the real world.
const (
	StatePending = "pending"
	StateStarted = "started"
	StateDone    = "done"
)

var knownStates = map[string]bool{StatePending: true, StateStarted: true, StateDone: true}

// Holder says who runs (or last ran) the operation and from where. The checkpoint is
// also the lock: a live holder renews RenewedAt every LeaseSeconds/3.
type Holder struct {
	User    string `json:"user,omitempty"`
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	Version string `json:"version,omitempty"`
	// Session tells two runs of the same process apart.
	Session      string     `json:"session,omitempty"`
	RenewedAt    *time.Time `json:"renewedAt,omitempty"`
	LeaseSeconds int        `json:"leaseSeconds,omitempty"`
	// ReleasedAt is set when the run stopped cleanly (error or interruption).
	ReleasedAt *time.Time `json:"releasedAt,omitempty"`
	// Machine identifies where PID means something: the kernel's boot and the PID
	// namespace (Linux; empty elsewhere and in checkpoints of older plugins, which then
	// compare Host alone). Two machines with one hostname differ here.
	Machine string `json:"machine,omitempty"`
	// ProcessStart is when the holder's process started (clock ticks since boot): a PID
	// reused by another process, or by a container restarted in place, starts later.
	ProcessStart string `json:"processStart,omitempty"`
}

// Takeover records that a run took the checkpoint over from a previous holder.
type Takeover struct {
	From   Holder    `json:"from"`
	By     Holder    `json:"by"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// PausedOperator is the operator Deployment the plan scales to 0 and restores.
type PausedOperator struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	Replicas  int32  `json:"replicas"`
	// Unmanaged lists the other clusters this operator manages, unmanaged meanwhile.
	Unmanaged []string `json:"unmanaged,omitempty"`
	// UnmanagedUnknown, at planning only, says why Unmanaged may be incomplete (listing
	// the clusters of every namespace was forbidden).
	UnmanagedUnknown string `json:"-"`
	// Joined, at planning only, lists the operations already holding the operator
	// paused, whose pause this one joins (PausedByAnnotation).
	Joined []PauseHolder `json:"-"`
	// Adopted, at planning only, lists holders of this cluster whose operation is gone
	// (its record wiped or cleared): this operation takes their pause over.
	Adopted []PauseHolder `json:"-"`
}

// String is "user@host pid N".
func (h Holder) String() string {
	s := h.Host
	if h.User != "" {
		s = h.User + "@" + s
	}
	return fmt.Sprintf("%s (pid %d)", s, h.PID)
}

// PVC is a claim planned for deletion, identified by name and UID.
type PVC struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// Node is one Cassandra node the operation acts on: planned for removal (scale-down), to
// be created (scale-up, New), cleaned up, restarted, or named by a stuck operator status.
type Node struct {
	Pod string `json:"pod"`
	// PodUID is the planned pod's UID; empty for a new pod, or for a pod that was already
	// gone when a repair was planned.
	PodUID      string `json:"podUID"`
	Ordinal     int    `json:"ordinal"`
	DC          string `json:"dc"`
	Rack        string `json:"rack"`
	StatefulSet string `json:"statefulSet"`
	HostID      string `json:"hostID"`
	Address     string `json:"address,omitempty"`
	PVCs        []PVC  `json:"pvcs"`
	// New marks a pod the operation creates (scale-up, schema 2): it has no UID, Host ID
	// or address when planned.
	New bool `json:"new,omitempty"`
	// Unstarted marks a pod a scale-down removes that never started (Pending, no
	// container ever ran, no node of the ring on it): it has no Host ID, and its removal
	// has no decommission (schema 2: a plugin that knows only schema 1 must not run it).
	Unstarted bool `json:"unstarted,omitempty"`
	// Size, for an operator that scales itself (operator.Scaler), is the datacenter's
	// size that asks it to remove or create this node (the size once it is done).
	Size int `json:"size,omitempty"`
}

// Target is what the operation was asked to reach.
type Target struct {
	DC    string   `json:"dc"`
	Racks []string `json:"racks"`
	Nodes int      `json:"nodes"`
	// From is the StatefulSet replicas per rack when the plan was made.
	From map[string]int `json:"from"`
	// RackNodes, when set, is the count each rack of the DC must end with, by rack
	// name (racks of one DC may differ). Unset (every checkpoint written so far): every
	// rack of the DC ends with Nodes.
	RackNodes map[string]int `json:"rackNodes,omitempty"`
	// Size, for an operator that keeps a datacenter's size and splits it over the racks
	// itself (operator.Scaler), is the size asked for; RackNodes is its split.
	Size int `json:"size,omitempty"`
}

// Wanted is the count each of racks (every rack of the target DC) must end with.
func (t Target) Wanted(racks []string) map[string]int {
	m := make(map[string]int, len(racks))
	for _, r := range racks {
		n, ok := t.RackNodes[r]
		if !ok {
			n = t.Nodes
		}
		m[r] = n
	}
	return m
}

// Step is the record of one planned step.
type Step struct {
	ID         string     `json:"id"`
	Kind       string     `json:"kind"`
	Pod        string     `json:"pod,omitempty"`
	State      string     `json:"state"`
	Attempts   int        `json:"attempts"`
	LastError  string     `json:"lastError,omitempty"`
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	// Progress is the last streaming progress seen while the step ran (progress.go).
	Progress *Progress `json:"progress,omitempty"`
	// ResumedAfterRestart (a decommission) records that the node restarted in the
	// middle of its decommission and the step issued it again: a resumed decommission
	// may skip ranges it had already streamed (CASSANDRA-16290), so once the node is
	// removed the run says to repair. Older plugins ignore the field.
	ResumedAfterRestart bool `json:"resumedAfterRestart,omitempty"`
}

// Checkpoint is the whole record, serialized as JSON into Annotation.
type Checkpoint struct {
	SchemaVersion int       `json:"schemaVersion"`
	OperationID   string    `json:"operationID"`
	Kind          string    `json:"kind"`
	Operator      string    `json:"operator"`
	Namespace     string    `json:"namespace"`
	Cluster       string    `json:"cluster"`
	ClusterUID    string    `json:"clusterUID"`
	StartedBy     Holder    `json:"startedBy"`
	Holder        Holder    `json:"holder"`
	StartedAt     time.Time `json:"startedAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
	// Seq grows by one on every write; a writer that finds another Seq than the one it
	// wrote last has lost the checkpoint to someone else.
	Seq    int    `json:"seq"`
	Force  bool   `json:"force,omitempty"`
	Target Target `json:"target"`
	// PausedOperator is set when the plan pauses the operator.
	PausedOperator *PausedOperator `json:"pausedOperator,omitempty"`
	Nodes          []Node          `json:"nodes"`
	// Leftovers are the claims of removed pods the operation deletes (leftover.go);
	// omitted when none, so every other checkpoint reads as older plugins wrote it.
	Leftovers []Leftover `json:"leftovers,omitempty"`
	Steps     []Step     `json:"steps"`
	Takeovers []Takeover `json:"takeovers,omitempty"`

	// Throughput is the stream throughput the operation sets and what each node had
	// (pkg/record/throughput.go); omitted when it sets none, so older checkpoints decode
	// as they were written.
	Throughput *record.StreamThroughput `json:"streamThroughput,omitempty"`
}

// LastOperation is the short record kept after an operation ends.
type LastOperation struct {
	OperationID string    `json:"operationID"`
	Kind        string    `json:"kind"`
	Result      string    `json:"result"`
	Summary     string    `json:"summary,omitempty"`
	StartedBy   Holder    `json:"startedBy"`
	StartedAt   time.Time `json:"startedAt"`
	FinishedAt  time.Time `json:"finishedAt"`
	// Warnings are what the operation found that needs the user's action after it
	// (a repair after a decommission resumed past a restart: CASSANDRA-16290).
	Warnings []string `json:"warnings,omitempty"`
}

// ErrCorrupt marks a checkpoint that cannot be used; ErrNewerSchema one written by a newer
// plugin; ErrUnknownKind one of an operation kind this build does not know (a newer
// build, or one with another operator, may be running it); ErrOtherCluster one copied
// from another cluster; ErrOtherOperator one planned for another operator than the one
// whose adapter reads the cluster (its steps follow that operator's rules).
var (
	ErrCorrupt       = errors.New("checkpoint is corrupt")
	ErrNewerSchema   = errors.New("checkpoint was written by a newer kubectl-cassandra")
	ErrUnknownKind   = errors.New("checkpoint is of an operation kind this build does not know")
	ErrOtherCluster  = errors.New("checkpoint belongs to another cluster")
	ErrOtherOperator = errors.New("checkpoint was planned for another operator")
)

// StepID is the stable identifier of a step.
func StepID(kind, pod string) string {
	if pod == "" {
		return kind
	}
	return kind + "/" + pod
}

// Encode serializes a checkpoint, of one of kinds, for the annotation.
func Encode(cp *Checkpoint, kinds Schemas) (string, error) {
	if err := cp.Validate("", kinds); err != nil {
		return "", err
	}
	b, err := json.Marshal(cp)
	if err != nil || len(b) <= compressAbove {
		return string(b), err
	}
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed) // the level is valid
	if _, err := zw.Write(b); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	e, err := json.Marshal(envelope{SchemaVersion: schemaEnvelope, Encoding: EncodingGzip, Data: base64.StdEncoding.EncodeToString(z.Bytes())})
	return string(e), err
}

// Unwrap returns the checkpoint JSON an annotation value holds: the value itself, or
// what a compressed envelope holds.
func Unwrap(s string) (string, error) {
	var e envelope
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		return "", fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if e.Encoding == "" {
		return s, nil
	}
	return e.inflate()
}

// inflate returns the checkpoint JSON the envelope holds.
func (e envelope) inflate() (string, error) {
	if e.Encoding != EncodingGzip {
		return "", fmt.Errorf("%w: unknown encoding %q", ErrCorrupt, e.Encoding)
	}
	z, err := base64.StdEncoding.DecodeString(e.Data)
	if err != nil {
		return "", fmt.Errorf("%w: compressed data: %v", ErrCorrupt, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return "", fmt.Errorf("%w: compressed data: %v", ErrCorrupt, err)
	}
	b, err := io.ReadAll(io.LimitReader(zr, maxInflated+1))
	if err != nil {
		return "", fmt.Errorf("%w: compressed data: %v", ErrCorrupt, err)
	}
	if len(b) > maxInflated {
		return "", fmt.Errorf("%w: compressed data inflates beyond %d MiB", ErrCorrupt, maxInflated>>20)
	}
	return string(b), nil
}

// Decode parses and validates an annotation value against the kinds the build knows.
// clusterUID, when not empty, must match.
func Decode(s, clusterUID string, kinds Schemas) (*Checkpoint, error) {
	return decode(s, clusterUID, kinds, true)
}

func decode(s, clusterUID string, kinds Schemas, envelopeOK bool) (*Checkpoint, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: annotation %s is empty", ErrCorrupt, Annotation)
	}
	// Read the version first, so a newer schema is reported as such even if it no
	// longer fits this struct.
	var head struct {
		SchemaVersion *int   `json:"schemaVersion"`
		Encoding      string `json:"encoding"`
		Data          string `json:"data"`
	}
	if err := json.Unmarshal([]byte(s), &head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if head.SchemaVersion == nil {
		return nil, fmt.Errorf("%w: no schemaVersion", ErrCorrupt)
	}
	if *head.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%w (schema %d, this build reads up to %d): upgrade the plugin", ErrNewerSchema, *head.SchemaVersion, SchemaVersion)
	}
	switch {
	case head.Encoding != "" && !envelopeOK:
		return nil, fmt.Errorf("%w: a compressed checkpoint inside a compressed checkpoint", ErrCorrupt)
	case head.Encoding != "":
		inner, err := envelope{Encoding: head.Encoding, Data: head.Data}.inflate()
		if err != nil {
			return nil, err
		}
		return decode(inner, clusterUID, kinds, false)
	}
	var cp Checkpoint
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&cp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if cp.SchemaVersion == 1 && cp.Kind == "" {
		cp.Kind = KindScaleDown // schema 1 knew only scale-downs
	}
	if err := cp.Validate(clusterUID, kinds); err != nil {
		return nil, err
	}
	return &cp, nil
}

// Validate checks the internal consistency of a checkpoint, of one of kinds.
func (cp *Checkpoint) Validate(clusterUID string, kinds Schemas) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, a...))
	}
	switch {
	case cp.SchemaVersion < 1:
		return bad("schemaVersion %d", cp.SchemaVersion)
	case cp.SchemaVersion > SchemaVersion:
		return fmt.Errorf("%w (schema %d)", ErrNewerSchema, cp.SchemaVersion)
	case cp.SchemaVersion > newestPlain:
		return bad("schema %d is a compressed checkpoint, but it has no encoding", cp.SchemaVersion)
	case cp.OperationID == "":
		return bad("no operationID")
	}
	kind, known := kinds[cp.Kind]
	switch {
	case !known:
		return fmt.Errorf("%w: %q (this build knows %s; a newer plugin, or one built with another operator, may be running it)",
			ErrUnknownKind, cp.Kind, strings.Join(slices.Sorted(maps.Keys(kinds)), ", "))
	case cp.SchemaVersion < kind.Version:
		return bad("operation kind %q needs schema %d, the checkpoint says %d", cp.Kind, kind.Version, cp.SchemaVersion)
	case cp.ClusterUID == "":
		return bad("no clusterUID")
	case cp.Cluster == "" || cp.Namespace == "":
		return bad("no cluster name or namespace")
	case len(cp.Steps) == 0:
		return bad("no steps")
	case cp.Target.Nodes < 1 && !kind.Unowned:
		return bad("target nodes %d", cp.Target.Nodes)
	}
	if clusterUID != "" && cp.ClusterUID != clusterUID {
		return fmt.Errorf("%w: it names cluster UID %s, this cluster is %s", ErrOtherCluster, cp.ClusterUID, clusterUID)
	}
	pods := map[string]bool{}
	for i, n := range cp.Nodes {
		if n.Pod == "" || n.StatefulSet == "" || n.Ordinal < 0 {
			return bad("node %d is incomplete", i)
		}
		if n.PodUID == "" && !n.New && !kind.Unowned {
			return bad("node %d is incomplete", i)
		}
		if n.New && !kind.NewNodes {
			return bad("node %s is new, which only a scale-up plans", n.Pod)
		}
		if n.Unstarted && (n.New || n.HostID != "" || cp.SchemaVersion < 2) {
			return bad("node %s never started, yet it is new, has a Host ID or is in a schema 1 checkpoint", n.Pod)
		}
		if pods[n.Pod] {
			return bad("node %s planned twice", n.Pod)
		}
		pods[n.Pod] = true
		for _, p := range n.PVCs {
			if p.Name == "" || p.UID == "" {
				return bad("node %s has a PVC without name or UID", n.Pod)
			}
		}
	}
	leftovers, why := validLeftovers(cp.Leftovers, pods)
	if why != "" {
		return bad("%s", why)
	}
	ids := map[string]bool{}
	for i, s := range cp.Steps {
		switch {
		case !slices.Contains(kind.Steps, s.Kind):
			return bad("step %d has unknown kind %q for a %s", i, s.Kind, cp.Kind)
		case !knownStates[s.State]:
			return bad("step %s has unknown state %q", s.ID, s.State)
		case s.ID != StepID(s.Kind, s.Pod):
			return bad("step %d has id %q, want %q", i, s.ID, StepID(s.Kind, s.Pod))
		case ids[s.ID]:
			return bad("step %s appears twice", s.ID)
		case s.Kind == StepDeleteLeftoverPVCs && !leftovers[s.Pod]:
			return bad("step %s names pod %s, which has no left-over claims in the plan", s.ID, s.Pod)
		case s.Kind != StepDeleteLeftoverPVCs && s.Pod != "" && !pods[s.Pod]:
			return bad("step %s names pod %s, which is not in the plan", s.ID, s.Pod)
		case s.Attempts < 0:
			return bad("step %s has negative attempts", s.ID)
		case (s.Kind == StepPauseOperator || s.Kind == StepResumeOperator) && cp.PausedOperator == nil:
			return bad("step %s without a pausedOperator record", s.ID)
		}
		ids[s.ID] = true
	}
	return nil
}

// PlannedFor refuses a checkpoint planned for another operator than operator (when
// both are known): its steps follow that operator's rules.
func (cp *Checkpoint) PlannedFor(operator string) error {
	if operator != "" && cp.Operator != "" && cp.Operator != operator {
		return fmt.Errorf("%w: operation %s was planned for %s, and this cluster is read as a %s cluster", ErrOtherOperator, cp.OperationID, cp.Operator, operator)
	}
	return nil
}

// Node returns the planned node for a pod.
func (cp *Checkpoint) Node(pod string) (Node, bool) {
	return find(cp.Nodes, func(n Node) bool { return n.Pod == pod })
}

// find is the first element of list that matches, and whether there is one.
func find[T any](list []T, match func(T) bool) (T, bool) {
	if i := slices.IndexFunc(list, match); i >= 0 {
		return list[i], true
	}
	var zero T
	return zero, false
}

// Current returns the index of the first step that is not done, or -1.
func (cp *Checkpoint) Current() int {
	for i, s := range cp.Steps {
		if s.State != StateDone {
			return i
		}
	}
	return -1
}

// SameTarget reports whether another request asks for what this checkpoint does.
func (cp *Checkpoint) SameTarget(dc string, racks []string, nodes int) bool {
	if cp.Target.DC != dc || cp.Target.Nodes != nodes || len(cp.Target.Racks) != len(racks) {
		return false
	}
	for i := range racks {
		if cp.Target.Racks[i] != racks[i] {
			return false
		}
	}
	return true
}

// Started reports whether any step of kind has started or finished.
func (cp *Checkpoint) Started(kind string) bool {
	for _, s := range cp.Steps {
		if s.Kind == kind && s.State != StatePending {
			return true
		}
	}
	return false
}
