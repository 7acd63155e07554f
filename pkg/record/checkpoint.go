package record

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Checkpoint is the durable record of an operation in flight, serialized as JSON into
// the cluster resource's checkpoint annotation: what was planned and attempted, never
// whether a step is done (the real world says that). A kind fills it in its plan and
// reads it back in its summary, its steps and its answer to an operation in flight; the
// plugin encodes, validates and fences it (internal/checkpoint).
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
	// (throughput.go); omitted when it sets none, so older checkpoints decode as they
	// were written.
	Throughput *StreamThroughput `json:"streamThroughput,omitempty"`

	// Replace is the dead node a replace-node replaces (replace.go); omitted by every
	// other kind.
	Replace *Replacement `json:"replace,omitempty"`

	// Ext is the kind's own record, in the kind's own JSON (a kind that needs one
	// reads and writes it itself: remove-dc's keyspace settings); omitted by the others.
	Ext json.RawMessage `json:"ext,omitempty"`
}

// Step states. "started" means the action may or may not have happened: resume asks
// the real world.
const (
	StatePending = "pending"
	StateStarted = "started"
	StateDone    = "done"
)

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

// StepID is the stable identifier of a step: its kind, and the pod it is about.
func StepID(kind, pod string) string {
	if pod == "" {
		return kind
	}
	return kind + "/" + pod
}

// PendingStep is a step record of kind for pod, not started: what a plan lists.
func PendingStep(kind, pod string) Step {
	return Step{ID: StepID(kind, pod), Kind: kind, Pod: pod, State: StatePending}
}

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

// String is "user@host pid N".
func (h Holder) String() string {
	s := h.Host
	if h.User != "" {
		s = h.User + "@" + s
	}
	return fmt.Sprintf("%s (pid %d)", s, h.PID)
}

// RenewedAtOr is when the holder last showed it was alive, or fallback.
func (h Holder) RenewedAtOr(fallback time.Time) time.Time {
	if h.RenewedAt != nil && h.RenewedAt.After(fallback) {
		return *h.RenewedAt
	}
	return fallback
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

// Node returns the planned node for a pod.
func (cp *Checkpoint) Node(pod string) (Node, bool) {
	return find(cp.Nodes, func(n Node) bool { return n.Pod == pod })
}

// Step returns the record of the step with id.
func (cp *Checkpoint) Step(id string) (Step, bool) {
	return find(cp.Steps, func(s Step) bool { return s.ID == id })
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

// Started reports whether any step of kind has started or finished.
func (cp *Checkpoint) Started(kind string) bool {
	for _, s := range cp.Steps {
		if s.Kind == kind && s.State != StatePending {
			return true
		}
	}
	return false
}

// SameTarget reports whether another request asks for what this checkpoint does.
func (cp *Checkpoint) SameTarget(dc string, racks []string, nodes int) bool {
	return cp.Target.Nodes == nodes && cp.SameRacks(dc, racks)
}

// SameRacks reports whether the checkpoint targets exactly dc and racks.
func (cp *Checkpoint) SameRacks(dc string, racks []string) bool {
	return cp.Target.DC == dc && slices.Equal(cp.Target.Racks, racks)
}

// Record is what changes whenever the holder writes: a run waiting for the lease
// compares it, never the holder's timestamps with its own clock.
func (cp *Checkpoint) Record() string {
	r := ""
	if cp.Holder.RenewedAt != nil {
		r = cp.Holder.RenewedAt.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%s/%s/%d/%s", cp.OperationID, cp.Holder.Session, cp.Seq, r)
}

// TakeOver makes self the holder and records the takeover.
func (cp *Checkpoint) TakeOver(self Holder, now time.Time, reason string) {
	if cp.Holder.Session != self.Session {
		cp.Takeovers = append(cp.Takeovers, Takeover{From: cp.Holder, By: self, At: now, Reason: reason})
	}
	r := now
	self.RenewedAt = &r
	self.ReleasedAt = nil
	cp.Holder = self
}
