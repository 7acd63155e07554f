package sim

import (
	"fmt"
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

// Management API job statuses: COMPLETED is what the management API's and
// cass-operator's tests show; WAITING (running) and ERROR are the rest of its
// Job.JobStatus as recalled, not checked against its source.
const (
	JobWaiting   = "WAITING"
	JobCompleted = "COMPLETED"
	JobError     = "ERROR"
)

// Job is one asynchronous job of the management API as GET
// /api/v0/ops/executor/job?job_id=<id> reports it (its JSON fields id, type, status,
// and error once failed; submit_time/end_time are not modelled).
type Job struct {
	ID, Type, Status string
	// Error is the job's exception message once it failed.
	Error string
}

// StartRebuild is the management API's POST /api/v1/ops/node/rebuild?src_dc=<dc>
// (cass-operator's rebuild task): the node's rebuild runs in the background and the
// call returns its job id at once. The checks of `nodetool rebuild` run in the job, so
// a refused rebuild is a job that ends in ERROR with the refusal's message; only a
// node whose JVM is down answers no job (code != ExitOK, the connect error's text).
func (s *Store) StartRebuild(pod, srcDC string) (code int, jobID, out string, err error) {
	err = s.update(func(st *state, now time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		if !n.jvmUp() {
			var b strings.Builder
			connectError(&b, st.Options, parseArgs(st.Options, []string{"rebuild"}))
			code, out = ExitUsage, b.String()
			return nil
		}
		r, _ := st.startRebuild(n, rebuildArgs{source: srcDC}, now)
		jobID = r.ID
		return nil
	})
	return code, jobID, out, err
}

// RebuildJob reads the job of a rebuild StartRebuild started on pod. A job the node
// does not know (its JVM restarted since: the management API keeps jobs in memory) is
// an error.
func (s *Store) RebuildJob(pod, jobID string) (Job, error) {
	var j Job
	err := s.read(func(st *state, _ time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		for _, r := range n.Rebuilds {
			if r.ID != jobID || r.Start.Before(n.StartedAt) {
				continue
			}
			j = Job{ID: r.ID, Type: "rebuild", Status: JobWaiting}
			switch r.Result {
			case rbOK:
				j.Status = JobCompleted
			case rbFailed, rbRefused, rbAborted:
				j.Status, j.Error = JobError, r.Err
			}
			return nil
		}
		return fmt.Errorf("sim: no job %s on %s", jobID, pod)
	})
	return j, err
}
