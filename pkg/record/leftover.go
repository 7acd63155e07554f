package record

// Leftover is the claims of a removed pod (an ordinal at or above its StatefulSet's
// replicas) that no pod uses, planned for deletion by UID (StepDeleteLeftoverPVCs).
type Leftover struct {
	Pod         string `json:"pod"`
	StatefulSet string `json:"statefulSet"`
	Rack        string `json:"rack"`
	Ordinal     int    `json:"ordinal"`
	PVCs        []PVC  `json:"pvcs"`
}

// Leftover returns the planned left-over claims of pod.
func (cp *Checkpoint) Leftover(pod string) (Leftover, bool) {
	return find(cp.Leftovers, func(l Leftover) bool { return l.Pod == pod })
}

// StepDeleteLeftoverPVCs deletes the claims a removal whose record is gone left behind
// (a scale-down that finds its racks at the target already plans it: the checkpoint is
// a log of intent, the world is the truth). One step per removed pod: its ID names the
// pod the claims were made for, which no longer exists; the checkpoint's Leftovers
// must hold them.
const StepDeleteLeftoverPVCs = "delete-leftover-pvcs"
