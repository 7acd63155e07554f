// Package status is the view model of `kubectl cassandra status`, in three parts kept
// apart so that each can be read and tested alone: internal/cli/status.go reads (once,
// or on every change of the watches of internal/cli/status_live.go) and gathers what it
// read into a Read; Build turns a Read into a Report with no I/O (build_test.go); Text
// and Lines render a Report. The JSON and YAML forms are the Report itself.
package status

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Report is the JSON/YAML form of `status`.
type Report struct {
	Cluster       Cluster                   `json:"cluster"`
	Datacenters   []DC                      `json:"datacenters"`
	Operation     *Operation                `json:"operation"`
	LastOperation *checkpoint.LastOperation `json:"lastOperation"`
	OperatorBusy  []string                  `json:"operatorBusy"`
	// Operators are the running operators of an operator that scales the datacenter
	// itself (they act, asked one node at a time; never paused).
	Operators []string `json:"operators,omitempty"`
	// StalePauses: operators held paused for operations that are gone; the next
	// command that acts on their cluster releases them.
	StalePauses []string `json:"stalePauses,omitempty"`
	Warnings    []string `json:"warnings"`
	Next        string   `json:"next"`
}

// Cluster is the cluster resource.
type Cluster struct {
	Name          string `json:"name"`
	Namespace     string `json:"namespace"`
	UID           string `json:"uid"`
	Operator      string `json:"operator"`
	APIVersion    string `json:"apiVersion"`
	ServerVersion string `json:"serverVersion,omitempty"`
	// Kind and OperatorTitle are how the text names the resource and its operator
	// ("CassandraCluster", "CassKop"); the JSON names neither.
	Kind          string `json:"-"`
	OperatorTitle string `json:"-"`
}

// DC is one datacenter and its racks.
type DC struct {
	Name         string `json:"name"`
	NodesPerRack int    `json:"nodesPerRack"`
	Racks        []Rack `json:"racks"`
	// Spec is the operator's words for what the resource asks of the DC
	// ("nodesPerRacks 3"; topology.DC.Spec), for the text.
	Spec string `json:"-"`
}

// Rack is one rack: its StatefulSet, pods and claims.
type Rack struct {
	Name          string `json:"name"`
	StatefulSet   string `json:"statefulSet"`
	Exists        bool   `json:"exists"`
	Replicas      int    `json:"replicas"`
	ReadyReplicas int    `json:"readyReplicas"`
	Pods          []Pod  `json:"pods"`
	PVCs          []PVC  `json:"pvcs"`
	// RemoveOne is the preflight's free-space check for removing the rack's highest
	// ordinal (operation.RemovalSpace); nil when the rack has fewer than two pods.
	RemoveOne *Space `json:"removeOne"`
	// Nodes is the count the spec asks of this rack (the text marks a rack whose
	// StatefulSet differs); the JSON keeps the datacenter's nodesPerRack.
	Nodes int `json:"-"`
}

// Space is what removing one node of a rack would need and find.
type Space struct {
	Pod string `json:"pod"`
	// Known is false when a Load or a data volume's capacity is unknown.
	Known     bool  `json:"known"`
	NeedBytes int64 `json:"needBytes"`
	FreeBytes int64 `json:"freeBytes"`
	Fits      bool  `json:"fits"`
}

// Pod is one Cassandra pod and its node in the ring.
type Pod struct {
	Name        string `json:"name"`
	Ordinal     int    `json:"ordinal"`
	Phase       string `json:"phase"`
	Ready       bool   `json:"ready"`
	Terminating bool   `json:"terminating"`
	IP          string `json:"ip,omitempty"`
	// NodeState is nodetool's two letters (UN, UL, DN…), "" when the ring does not list
	// the pod's address, "?" when the ring could not be read.
	NodeState string `json:"nodeState"`
	// OperatorState is the operator's word for the pod ("Started", "Decommissioning", …;
	// cass-operator's node-state label), "" when it keeps none.
	OperatorState string `json:"operatorState,omitempty"`
	HostID        string `json:"hostID,omitempty"`
	// Load and Owns are nodetool status's cells, from the same ring read ("" unread).
	Load string `json:"load,omitempty"`
	Owns string `json:"owns,omitempty"`
}

// PVC is one claim of a rack's volume claim templates.
type PVC struct {
	Name        string `json:"name"`
	Pod         string `json:"pod"`
	Phase       string `json:"phase"`
	Terminating bool   `json:"terminating"`
	PodExists   bool   `json:"podExists"`
	// Capacity is the claim's capacity (status, else its request), e.g. "100Gi".
	Capacity      string `json:"capacity,omitempty"`
	CapacityBytes int64  `json:"capacityBytes,omitempty"`
}

// Operation is the operation in flight, from its checkpoint.
type Operation struct {
	ID        string        `json:"id"`
	Kind      string        `json:"kind"`
	Target    record.Target `json:"target"`
	StartedBy record.Holder `json:"startedBy"`
	Holder    record.Holder `json:"holder"`
	StartedAt string        `json:"startedAt"`
	UpdatedAt string        `json:"updatedAt"`
	// Running says a live run holds the operation; false when its holder stopped
	// (released, its process gone, its lease expired). Judged says which, in words.
	Running     bool         `json:"running"`
	Judged      string       `json:"judged,omitempty"`
	StepsDone   int          `json:"stepsDone"`
	StepsTotal  int          `json:"stepsTotal"`
	CurrentStep *record.Step `json:"currentStep,omitempty"`
	// Progress is the last streaming progress recorded by the run (the newest of the
	// steps not done), so another machine sees how far a decommission or bootstrap is.
	Progress *record.Progress `json:"progress,omitempty"`
	// PausedOperator is set while the operation keeps the operator paused.
	PausedOperator *record.PausedOperator `json:"pausedOperator,omitempty"`
	Error          string                 `json:"error,omitempty"`
}
