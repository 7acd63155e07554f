package record

// Schema is what a checkpoint of one operation kind may hold; the plugin's decode
// refuses anything else. Each kind says its own in its Info (internal/operation/*, an
// operator's kind under plugins/), so the checkpoint machinery knows no kind's steps.
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
	// Empties: its target is no node at all (a datacenter removed): Target.Nodes 0.
	Empties bool
}
