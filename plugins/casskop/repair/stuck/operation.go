package stuck

// RackOperation is an operator's record of the last pod operation on a rack and of the
// rack's last action (CassKop: status.cassandraRackStatus["<dc>-<rack>"]
// .podLastOperation and .cassandraLastAction).
type RackOperation struct {
	DC   string `json:"dc"`
	Rack string `json:"rack"`
	// Operation and Status are the pod operation (e.g. "decommission", "Ongoing"); Pods
	// are the pods it works on, PodsOK those it finished.
	Operation string   `json:"operation,omitempty"`
	Status    string   `json:"status,omitempty"`
	Pods      []string `json:"pods,omitempty"`
	PodsOK    []string `json:"podsOK,omitempty"`
	// Action and ActionStatus are the rack's last action (e.g. "ScaleDown", "ToDo").
	Action       string `json:"action,omitempty"`
	ActionStatus string `json:"actionStatus,omitempty"`
}

// Key is the operator's name of the rack: "<dc>-<rack>".
func (r RackOperation) Key() string { return r.DC + "-" + r.Rack }
