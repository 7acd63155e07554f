package sim

import (
	"fmt"
	"time"
)

// SetPeerState puts a node in the state another party's operation leaves it in, as its
// peers see it, without touching the counters the plugin's own actions drive
// (decommissions, drains, restarts): "UL" (someone else's decommission under way), "UJ"
// (the node bootstraps again, e.g. a replace) or "UN" (that operation ended). The
// changing-world matrix (internal/cli/changing_test.go) uses it.
func (s *Store) SetPeerState(pod, code string) error {
	return s.update(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		switch code {
		case "UL":
			n.Leaving, n.Joining, n.Mode = true, false, ModeLeaving
		case "UJ":
			// JoinStart far ahead keeps it joining whatever JoinTime is (settleJoins).
			n.Leaving, n.Joining, n.Mode, n.JoinStart = false, true, ModeJoining, now.Add(100*365*24*time.Hour)
		case "UN":
			n.Leaving, n.Joining, n.Mode, n.JoinStart = false, false, ModeNormal, time.Time{}
		default:
			return fmt.Errorf("sim: SetPeerState: unknown state %q (want UL, UJ or UN)", code)
		}
		n.StatusVersion++
		return nil
	})
}
