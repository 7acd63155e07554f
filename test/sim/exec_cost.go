package sim

import "time"

// The cost of a nodetool invocation: a real one starts a JVM before it connects
// (about 1.5 s), which is what Options.ExecCost charges, and what a bench counts.

// SetExecCost makes every command this store runs cost d instead of Options.ExecCost
// (the nodetool-sim binary sets it from NODETOOL_SIM_EXEC_COST).
func (s *Store) SetExecCost(d time.Duration) { s.execCost = &d }

// startExec reads what a command needs before it runs and, when execs cost something,
// counts this one on the pod (a write, so only then). The returned wait is the exec
// cost plus the node's Slow fault.
func (s *Store) startExec(pod string) (opts Options, wait time.Duration, up bool, err error) {
	look := func(st *state, _ time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		opts, wait, up = st.Options, n.Fault.Slow, n.jvmUp()
		return nil
	}
	if err = s.read(look); err != nil {
		return opts, 0, false, err
	}
	cost := opts.ExecCost
	if s.execCost != nil {
		cost = *s.execCost
	}
	if cost <= 0 {
		return opts, wait, up, nil
	}
	err = s.update(func(st *state, now time.Time) error {
		if err := look(st, now); err != nil {
			return err
		}
		n, _ := st.node(pod)
		n.Execs++
		return nil
	})
	return opts, wait + cost, up, err
}
