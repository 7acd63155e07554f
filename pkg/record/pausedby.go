package record

import (
	"encoding/json"
	"fmt"
)

// PausedByAnnotation, on an operator Deployment, lists the operations that hold it
// paused. One operator may manage several clusters (CassKop with WATCH_NAMESPACE empty
// watches every namespace; any CassKop manages every cluster of its namespace), so two
// operations may pause it at once: it is scaled back only when the last one leaves.
// The list is written together with the scale, under a resourceVersion precondition
// (the plugin's pause step).
const PausedByAnnotation = "kubectl-cassandra.io/paused-by"

// PauseHolder is one operation holding an operator paused.
type PauseHolder struct {
	OperationID string `json:"operationID"`
	Namespace   string `json:"namespace"`
	Cluster     string `json:"cluster"`
	// Replicas is the operator's replica count before the first holder paused it (a
	// holder that joins copies it from the first), which the last one restores.
	Replicas int32 `json:"replicas"`
}

// String is "<operation> on <namespace>/<cluster>".
func (h PauseHolder) String() string {
	return fmt.Sprintf("%s on %s/%s", h.OperationID, h.Namespace, h.Cluster)
}

// PauseHolders reads the holders from an operator Deployment's annotations (none when
// the annotation is absent). An unreadable list is an error: whether another operation
// still needs the operator paused is then unknown.
func PauseHolders(ann map[string]string) ([]PauseHolder, error) {
	v, ok := ann[PausedByAnnotation]
	if !ok || v == "" {
		return nil, nil
	}
	var hs []PauseHolder
	if err := json.Unmarshal([]byte(v), &hs); err != nil {
		return nil, fmt.Errorf("annotation %s is not a list of operations: %w", PausedByAnnotation, err)
	}
	return hs, nil
}

// HolderIndex is the index of operation id in hs, or -1.
func HolderIndex(hs []PauseHolder, id string) int {
	for i, h := range hs {
		if h.OperationID == id {
			return i
		}
	}
	return -1
}

// Holders is PauseHolders for an adapter describing its operator's Deployment: an
// unreadable list counts as one unnamed holder (someone holds it paused; whether its
// operation still needs the pause is unknown).
func Holders(ann map[string]string) []PauseHolder {
	hs, err := PauseHolders(ann)
	if err != nil {
		return []PauseHolder{{OperationID: "(unreadable " + PausedByAnnotation + ")"}}
	}
	return hs
}
