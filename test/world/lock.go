package world

// PVCDeletes lists the claims deleted through the API, in order (a claim deleted twice
// appears twice): tests of the lock count them per run.
func (w *World) PVCDeletes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.pvcDeletes...)
}
