package scaledown

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/scaleup"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

const example = `  # Scale rack rack1 of the only {Kind} in namespace cassandra down to 1 node
  kubectl cassandra scale -n cassandra --rack rack1 --nodes 1

  # Name the cluster, and the datacenter when the rack name is ambiguous
  kubectl cassandra scale cassandra-demo --dc dc1 --rack rack1 --nodes 2

  # Scale every rack of datacenter dc1 ({Operator} keeps one count per datacenter), rack by rack
  kubectl cassandra scale cassandra-demo --dc dc1 --nodes 2

  # The highest node is dead (DN, its JVM gone): remove it with nodetool removenode from a
  # live node instead of a decommission (its ranges re-streamed from the other replicas)
  kubectl cassandra scale cassandra-demo --rack rack1 --nodes 2 --remove-dead

  # Show the exact plan and change nothing
  kubectl cassandra scale cassandra-demo --rack rack1 --nodes 1 --dry-run -o json

  # From a script: no prompt
  kubectl cassandra scale cassandra-demo --rack rack1 --nodes 1 --yes

  # Scale up to 4 nodes, one at a time, then nodetool cleanup on the nodes that were there
  kubectl cassandra scale cassandra-demo --rack rack1 --nodes 4 --cleanup

  # Let each leaving node stream at 200 MiB/s (the default is 24 MiB/s from Cassandra 4.1),
  # its own limit recorded first and put back after
  kubectl cassandra scale cassandra-demo --rack rack1 --nodes 1 --stream-throughput 200MiB/s`

// Command implements operation.Commander: kubectl cassandra scale, which plans a
// scale-down, or a scale-up (internal/operation/scaleup) when the racks grow. The
// access checked first is the scale-down's, whichever way the plan goes.
func (k Kind) Command() pub.Command {
	return pub.Command{
		Use:   "scale [CLUSTER] --rack RACK --nodes N",
		Short: "Scale a rack down or up, one node at a time, resumably",
		Long: `Scale a rack down one node at a time, highest ordinal first: nodetool decommission in the
node's pod, verify the node left the ring, shrink the StatefulSet, wait for the pod to go, delete
its PVCs; at the end set the {Kind}'s {Count} so that it and the StatefulSets agree.

A dead node (DN, its nodetool silent) cannot be decommissioned: its data cannot stream from it.
With --remove-dead, a dead node among those removed is removed with nodetool removenode <Host ID>
on a live node of its rack instead (the remaining nodes stream its ranges from the other
replicas; keyspaces with replication factor 1 lose its data, which --force accepts), re-checked
right before (still DN and silent, every other node UN, nothing joining, leaving or moving, no
removal already in process); then verified gone from the ring like any removed node. Not where
the operator scales the datacenter itself: it removes nodes only by decommission.

With --nodes larger than today, scale the rack up one node at a time: grow the StatefulSet by one,
wait until the new pod is Ready and its node UN (bootstrap finished), then the next; then set
{Count}. With --cleanup, nodetool cleanup then runs on every node that was in the datacenter
before, one at a time (a run interrupted during a cleanup runs it again on that node: harmless).
Where the operator scales the datacenter itself (cass-operator), --cleanup creates a CassandraTask
of command cleanup named after the operation once the last new node joined, and waits until it
reports every pre-existing pod COMPLETED.

Where the operator scales datacenters itself (cass-operator's CassandraDatacenter), it is the
one that removes and adds nodes: --nodes is the datacenter's size (with --rack, only a size
the operator's split over the racks gives), and the plugin checks first (every node UN, the
replication factors, free space, no task running), then lowers or raises the size by one node
at a time, with a patch that tests the current value, and verifies each step in the world
(the node leaving, out of the ring, its pod and PVCs gone, or the new node UN). That operator
is never paused.

Every step is written to a checkpoint annotation on the {Kind} before it runs. If the
run is interrupted, "kubectl cassandra resume" finishes it from any machine; running the same
scale command again does the same.`,
		Example: example,
		During:  "the operation",
		Flags: func(fs *pflag.FlagSet, req *pub.Request) {
			o := &Options{}
			req.Ext = o
			operation.RackFlags(fs, req, "Rack to scale down")
			fs.IntVar(&req.Nodes, "nodes", 0, "Number of nodes the rack keeps (for an operator that splits a datacenter's size over its racks itself, without --rack: the datacenter's size)")
			fs.BoolVar(&req.Force, "force", false, "Pass --force to nodetool decommission (Cassandra 4.0+): skip Cassandra's replication-factor check")
			fs.BoolVar(&o.RemoveDead, "remove-dead", false, "Scale-down: remove a dead node (DN, its nodetool silent) among those removed with nodetool removenode on a live node instead of a decommission; its ranges are re-streamed from the other replicas")
			fs.BoolVar(&o.Up.Cleanup, "cleanup", false, "Scale-up: run nodetool cleanup on each pre-existing node of the datacenter afterwards, one at a time")
			operation.ThroughputFlag(fs, req, "the nodes that stream: in a scale-down each leaving node (the sender of its decommission), in a scale-up the datacenter's nodes (the sources of each bootstrap)")
		},
		Retry:    retry,
		Validate: validate,
		Busy:     true,
		InFlight: inFlight,
		Plan:     k.planScale,
		Next: func(ns, cluster string, plan *pub.Plan, asked pub.Request) string {
			req := pub.KindRequestOf[Options](asked)
			next := operation.RackNext("scale", ns, cluster, plan, req.Request) + fmt.Sprintf(" --nodes %d --yes", req.Nodes)
			if req.Options.Up.Cleanup {
				next += " --cleanup"
			}
			if req.Options.RemoveDead {
				next += " --remove-dead"
			}
			if req.StreamThroughput != "" {
				next += " --stream-throughput " + req.StreamThroughput
			}
			return next
		},
	}
}

// retry offers the scale command with the checkpoint's target and --force: after Cassandra
// refused a decommission (its replication check), the plan made again with --force
// skips that check where Cassandra allows it (internal/cli/replan.go).
func retry(cp *record.Checkpoint) string {
	if cp.Kind != checkpoint.KindScaleDown || cp.Force {
		return ""
	}
	c := fmt.Sprintf("kubectl cassandra scale -n %s %s --dc %s", cp.Namespace, cp.Cluster, cp.Target.DC)
	if len(cp.Target.Racks) == 1 {
		// A --dc plan of a one-rack DC has the same target as --rack.
		c += " --rack " + cp.Target.Racks[0]
	}
	c += fmt.Sprintf(" --nodes %d --force --yes", cp.Target.Nodes)
	if operation.CountSteps(cp, steps.StepRemoveNode) > 0 {
		c += " --remove-dead" // planned again, the dead node is still removed that way
	}
	return "skip Cassandra's replication check (where Cassandra allows it; the plan is made again with --force): " + c
}

// validate checks --nodes and the racks (bad usage, nothing changed).
func validate(req pub.Request, changed func(string) bool) error {
	if !changed("nodes") {
		return exit.Usagef("--nodes is required (the number of nodes each selected rack should keep)")
	}
	if req.Nodes < 1 {
		return exit.Usagef("--nodes must be a positive number, got %d (rack removal is not what scale does: it keeps at least one node per rack)", req.Nodes)
	}
	if err := operation.ValidateThroughput(req, changed); err != nil {
		return err
	}
	// The racks are checked by the plan: an operator that splits a datacenter's size
	// itself (operator.Scaler) takes --nodes alone as the datacenter's size.
	return nil
}

// planScale plans a scale-down, or a scale-up when the racks grow; --force is only for
// a decommission and --cleanup only after a scale-up.
func (k Kind) planScale(ctx context.Context, env *pub.Env) (*pub.Plan, error) {
	plan, err := k.Plan(ctx, env)
	req := pub.KindRequestOf[Options](env.Request)
	var grows *operation.ErrScaleUp
	switch {
	case errors.As(err, &grows) && env.Request.Force:
		return nil, exit.Usagef("--force passes --force to nodetool decommission: a scale-up decommissions nothing; nothing changed")
	case errors.As(err, &grows) && req.Options.RemoveDead:
		return nil, exit.Usagef("--remove-dead removes dead nodes in a scale-down: a scale-up removes nothing; nothing changed")
	case errors.As(err, &grows):
		up := *env
		up.Request.Ext = &req.Options.Up
		return scaleup.Kind{}.Plan(ctx, &up)
	case err == nil && req.Options.Up.Cleanup:
		return nil, exit.Usagef("--cleanup is for a scale-up (after a decommission the remaining nodes only gain ranges: nothing to clean); nothing changed")
	}
	return plan, err
}

// inFlight resumes a scale in flight with the same target (planned again when --force
// changed), and refuses one with another target.
func inFlight(existing *record.Checkpoint, asked pub.Asked) pub.InFlight {
	if existing.Kind != checkpoint.KindScaleDown && existing.Kind != scaleup.Name {
		return pub.InFlight{}
	}
	if !existing.SameTarget(asked.DC, asked.Racks, asked.Request.Nodes) {
		return pub.InFlight{Refuse: exit.Refusedf("operation %s is in flight on %s (datacenter %s racks %s to %d nodes, started by %s at %s); finish it first: %s",
			existing.OperationID, existing.Cluster, existing.Target.DC, strings.Join(existing.Target.Racks, ","), existing.Target.Nodes, existing.StartedBy,
			existing.StartedAt.Format(time.RFC3339), asked.ResumeHint)}
	}
	if existing.Kind == checkpoint.KindScaleDown && asked.Request.Force != existing.Force {
		return pub.InFlight{Replan: true}
	}
	return pub.InFlight{Resume: true, Say: fmt.Sprintf("Operation %s with the same target is in flight; resuming it.", existing.OperationID) + operation.ThroughputSay(existing, asked.Request.StreamThroughput, "scale again")}
}
