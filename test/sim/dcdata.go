package sim

import "time"

// HoldsData reports whether a user keyspace replicates to dc: a node that bootstraps
// there then streams its share; in a DC no keyspace replicates to it joins owning no
// replicas and streams nothing (RangeStreamer finds no range to fetch), so it holds
// only its system tables.
func (s *Store) HoldsData(dc string) (bool, error) {
	held := false
	err := s.read(func(st *state, _ time.Time) error {
		for _, k := range st.Schema.user() {
			if k.rfIn(dc) > 0 {
				held = true
			}
		}
		return nil
	})
	return held, err
}
