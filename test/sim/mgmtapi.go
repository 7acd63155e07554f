package sim

import (
	"strings"
	"time"
)

// StartDecommission is the management API's asynchronous decommission (cass-operator's
// POST /api/v1/ops/node/decommission?force=<force>): the node runs the same checks as
// nodetool's decommission and, when they pass, starts leaving; the call returns at once
// with the attempt's job id. A refusal returns code != ExitOK, no id and the refusal's
// text. Like a nodetool call it counts in DecommissionCalls. It never blocks: the attempt
// goes on by the clock (a stand-in operator polls the ring, it never waits on the job).
func (s *Store) StartDecommission(pod string, force bool) (code int, jobID, out string, err error) {
	err = s.update(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		n.Calls++
		args := []string{"decommission"}
		if force {
			args = append(args, "--force")
		}
		inv := parseArgs(st.Options, args)
		if !n.jvmUp() {
			var b strings.Builder
			connectError(&b, st.Options, inv)
			code, out = ExitUsage, b.String()
			return nil
		}
		var b strings.Builder
		code, jobID = st.decide(n, inv.force, now, &b)
		out = b.String()
		return nil
	})
	return code, jobID, out, err
}
