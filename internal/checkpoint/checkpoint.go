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

// Schemas are the operation kinds a build knows, by name.
type Schemas map[string]record.Schema

var knownStates = map[string]bool{record.StatePending: true, record.StateStarted: true, record.StateDone: true}

// LastOperation is the short record kept after an operation ends.
type LastOperation struct {
	OperationID string        `json:"operationID"`
	Kind        string        `json:"kind"`
	Result      string        `json:"result"`
	Summary     string        `json:"summary,omitempty"`
	StartedBy   record.Holder `json:"startedBy"`
	StartedAt   time.Time     `json:"startedAt"`
	FinishedAt  time.Time     `json:"finishedAt"`
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

// Encode serializes a checkpoint, of one of kinds, for the annotation.
func Encode(cp *record.Checkpoint, kinds Schemas) (string, error) {
	if err := Validate(cp, "", kinds); err != nil {
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
func Decode(s, clusterUID string, kinds Schemas) (*record.Checkpoint, error) {
	return decode(s, clusterUID, kinds, true)
}

func decode(s, clusterUID string, kinds Schemas, envelopeOK bool) (*record.Checkpoint, error) {
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
	var cp record.Checkpoint
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&cp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if cp.SchemaVersion == 1 && cp.Kind == "" {
		cp.Kind = KindScaleDown // schema 1 knew only scale-downs
	}
	if err := Validate(&cp, clusterUID, kinds); err != nil {
		return nil, err
	}
	return &cp, nil
}

// Validate checks the internal consistency of a checkpoint, of one of kinds.
func Validate(cp *record.Checkpoint, clusterUID string, kinds Schemas) error {
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
	case cp.Target.Nodes < 1 && !kind.Unowned && !kind.Empties:
		return bad("target nodes %d", cp.Target.Nodes)
	}
	if clusterUID != "" && cp.ClusterUID != clusterUID {
		return fmt.Errorf("%w: it names cluster UID %s, this cluster is %s", ErrOtherCluster, cp.ClusterUID, clusterUID)
	}
	pods, why := validNodes(cp, kind)
	if why != "" {
		return bad("%s", why)
	}
	leftovers, why := validLeftovers(cp.Leftovers, pods)
	if why != "" {
		return bad("%s", why)
	}
	if why := validSteps(cp, kind, pods, leftovers); why != "" {
		return bad("%s", why)
	}
	return nil
}

// validNodes checks the planned nodes of cp, of kind: each complete, planned once, new
// or never started only where that can be. It answers the planned pods, or what is
// wrong.
func validNodes(cp *record.Checkpoint, kind record.Schema) (pods map[string]bool, bad string) {
	pods = map[string]bool{}
	for i, n := range cp.Nodes {
		if n.Pod == "" || n.StatefulSet == "" || n.Ordinal < 0 {
			return nil, fmt.Sprintf("node %d is incomplete", i)
		}
		if n.PodUID == "" && !n.New && !kind.Unowned {
			return nil, fmt.Sprintf("node %d is incomplete", i)
		}
		if n.New && !kind.NewNodes {
			return nil, fmt.Sprintf("node %s is new, which only a scale-up plans", n.Pod)
		}
		if n.Unstarted && (n.New || n.HostID != "" || cp.SchemaVersion < 2) {
			return nil, fmt.Sprintf("node %s never started, yet it is new, has a Host ID or is in a schema 1 checkpoint", n.Pod)
		}
		if pods[n.Pod] {
			return nil, fmt.Sprintf("node %s planned twice", n.Pod)
		}
		pods[n.Pod] = true
		for _, p := range n.PVCs {
			if p.Name == "" || p.UID == "" {
				return nil, fmt.Sprintf("node %s has a PVC without name or UID", n.Pod)
			}
		}
	}
	return pods, ""
}

// validSteps checks the steps of cp, of kind: each of a kind it knows, in a known
// state, with its own id, once, naming a planned pod (or one with left-over claims)
// and, for the operator's pause, a pause record. It answers what is wrong ("" none).
func validSteps(cp *record.Checkpoint, kind record.Schema, pods, leftovers map[string]bool) string {
	ids := map[string]bool{}
	for i, s := range cp.Steps {
		switch {
		case !slices.Contains(kind.Steps, s.Kind):
			return fmt.Sprintf("step %d has unknown kind %q for a %s", i, s.Kind, cp.Kind)
		case !knownStates[s.State]:
			return fmt.Sprintf("step %s has unknown state %q", s.ID, s.State)
		case s.ID != record.StepID(s.Kind, s.Pod):
			return fmt.Sprintf("step %d has id %q, want %q", i, s.ID, record.StepID(s.Kind, s.Pod))
		case ids[s.ID]:
			return fmt.Sprintf("step %s appears twice", s.ID)
		case s.Kind == record.StepDeleteLeftoverPVCs && !leftovers[s.Pod]:
			return fmt.Sprintf("step %s names pod %s, which has no left-over claims in the plan", s.ID, s.Pod)
		case s.Kind != record.StepDeleteLeftoverPVCs && s.Pod != "" && !pods[s.Pod]:
			return fmt.Sprintf("step %s names pod %s, which is not in the plan", s.ID, s.Pod)
		case s.Attempts < 0:
			return fmt.Sprintf("step %s has negative attempts", s.ID)
		case (s.Kind == record.StepPauseOperator || s.Kind == record.StepResumeOperator) && cp.PausedOperator == nil:
			return fmt.Sprintf("step %s without a pausedOperator record", s.ID)
		}
		ids[s.ID] = true
	}
	return ""
}

// PlannedFor refuses a checkpoint planned for another operator than operator (when
// both are known): its steps follow that operator's rules.
func PlannedFor(cp *record.Checkpoint, operator string) error {
	if operator != "" && cp.Operator != "" && cp.Operator != operator {
		return fmt.Errorf("%w: operation %s was planned for %s, and this cluster is read as a %s cluster", ErrOtherOperator, cp.OperationID, cp.Operator, operator)
	}
	return nil
}
