package checkpoint

import "fmt"

// StepDeleteLeftoverPVCs deletes the claims a removal whose record is gone left behind
// (a scale-down that finds its racks at the target already plans it: the checkpoint is
// a log of intent, the world is the truth). One step per removed pod: its ID names the
// pod the claims were made for, which no longer exists.
const StepDeleteLeftoverPVCs = "delete-leftover-pvcs"

// Leftover is the claims of a removed pod (an ordinal at or above its StatefulSet's
// replicas) that no pod uses, planned for deletion by UID.
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

// validLeftovers checks the left-over records (bad: why not, "" when fine) and returns
// their pods, which their steps name.
func validLeftovers(ls []Leftover, nodes map[string]bool) (pods map[string]bool, bad string) {
	pods = map[string]bool{}
	for i, l := range ls {
		switch {
		case l.Pod == "" || l.StatefulSet == "" || l.Ordinal < 0 || len(l.PVCs) == 0:
			return nil, fmt.Sprintf("left-over record %d is incomplete", i)
		case pods[l.Pod] || nodes[l.Pod]:
			return nil, fmt.Sprintf("pod %s is planned twice", l.Pod)
		}
		for _, p := range l.PVCs {
			if p.Name == "" || p.UID == "" {
				return nil, fmt.Sprintf("left-over claims of %s include one without name or UID", l.Pod)
			}
		}
		pods[l.Pod] = true
	}
	return pods, ""
}
