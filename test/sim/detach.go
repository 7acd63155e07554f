package sim

import "time"

// Detach takes pod's node out of its pod, as when the pod's data volume is deleted: its
// JVM stops; peers keep a ring member (or an announced replacement) in gossip, down,
// with no pod (Endpoints lists it Detached), and forget anything else. A later
// StartFresh or AddNode of the pod starts a new node, which may replace the old one.
func (s *Store) Detach(pod string) error {
	return s.update(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		st.detach(n, now)
		return nil
	})
}
