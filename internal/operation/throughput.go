package operation

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// ThroughputFlag registers --stream-throughput into req; streams says whose limit it
// sets (the command's help).
func ThroughputFlag(fs *pflag.FlagSet, req *pub.Request, streams string) {
	fs.StringVar(&req.StreamThroughput, "stream-throughput", "", "Set the stream throughput of "+streams+" to `RATE` while they stream (200MiB/s, 1600Mb/s; 0: no throttle), "+
		"then put back the values recorded before. Only a sender's limit throttles a stream")
}

// ValidateThroughput refuses a --stream-throughput that is no rate (a usage error:
// nothing changed).
func ValidateThroughput(req pub.Request, changed func(string) bool) error {
	if !changed("stream-throughput") {
		return nil
	}
	if _, err := nodetool.ParseRate(req.StreamThroughput); err != nil {
		return exit.Usagef("--stream-throughput: %v; nothing changed", err)
	}
	return nil
}

// ThroughputSay is what resuming an operation says of a --stream-throughput given
// again: the plan in flight keeps its own rate ("" when they agree). again is how to
// plan anew ("scale again").
func ThroughputSay(existing *record.Checkpoint, asked, again string) string {
	if asked == "" {
		return ""
	}
	r, err := nodetool.ParseRate(asked)
	if err != nil {
		return ""
	}
	if existing.Throughput == nil {
		return fmt.Sprintf(" It sets no stream throughput: --stream-throughput %s is not applied (abort it and %s to set one).", asked, again)
	}
	if planned := steps.RateThroughput(existing.Throughput.Rate); planned != r {
		return fmt.Sprintf(" It sets the stream throughput to %s: --stream-throughput %s is not applied (abort it and %s to change it).", planned, asked, again)
	}
	return ""
}

// versionReader reads a node's Cassandra version (nodetool.Client).
type versionReader interface {
	Version(ctx context.Context, pod string) (nodetool.Version, error)
}

// PlanThroughput is the stream throughput record of a plan whose nodes stream, nil
// without --stream-throughput, with the warnings that go with it. The rate is checked
// against the Cassandra version read on reader (the cluster resource's when that read
// is not offered): a rate a limiter of that version cannot take is refused (exit 3)
// with the nearest one it can. loads are the bytes each node is expected to stream or
// receive, sources the nodes the steps without a pod act on (a scale-up's).
func PlanThroughput(ctx context.Context, env *pub.Env, dc topology.DC, reader string, loads map[string]int64, sources []string) (*record.StreamThroughput, []string, error) {
	req := env.Request
	if req.StreamThroughput == "" {
		return nil, nil, nil
	}
	rate, err := nodetool.ParseRate(req.StreamThroughput)
	if err != nil {
		return nil, nil, exit.Usagef("--stream-throughput: %v; nothing changed", err)
	}
	v, err := clusterVersion(ctx, env, reader)
	if err != nil {
		return nil, nil, err
	}
	interDC := len(env.Cluster.DCs) > 1
	for _, l := range nodetool.Limiters(v, interDC) {
		if _, err := nodetool.SetThroughputArgs(v, l, rate); err != nil {
			return nil, nil, exit.Refusedf("--stream-throughput %s: %v; nothing changed", req.StreamThroughput, err)
		}
	}
	tp := &record.StreamThroughput{Rate: steps.RecordRate(rate), InterDC: interDC, Version: v.String(), Sources: sources, Loads: loads}
	var warnings []string
	if w := dc.Encryption.Warning(interDC); w != "" {
		warnings = append(warnings, "--stream-throughput: "+w)
	}
	return tp, warnings, nil
}

// clusterVersion is ClusterVersion for --stream-throughput.
func clusterVersion(ctx context.Context, env *pub.Env, reader string) (nodetool.Version, error) {
	return ClusterVersion(ctx, env, reader, "--stream-throughput: cannot tell the Cassandra version (%v), on which the throughput's units and commands depend; nothing changed")
}

// ClusterVersion is the Cassandra version of the node on reader, else the one the
// cluster resource names; refused (refusal formats the reason) when neither says.
func ClusterVersion(ctx context.Context, env *pub.Env, reader, refusal string) (nodetool.Version, error) {
	var readErr error
	if vr, ok := PlannerOf(env).Nodetool.(versionReader); ok && reader != "" {
		v, err := vr.Version(ctx, reader)
		if err == nil {
			return v, nil
		}
		readErr = err
	}
	v, err := nodetool.ParseVersion(env.Cluster.ServerVersion)
	if err == nil {
		return v, nil
	}
	if readErr == nil {
		readErr = err
	}
	return v, exit.Refusedf(refusal, readErr)
}

// TotalLoad is the bytes of the ring's nodes of dc whose Load reads, and how many.
func TotalLoad(r pubnodetool.Ring, dc string) (total int64, n int) {
	for _, row := range r.Nodes {
		if row.DC != dc {
			continue
		}
		if l, ok := ParseLoad(row.Load); ok {
			total += int64(l)
			n++
		}
	}
	return total, n
}

// NodeLoad is the Load of the ring's node with hostID, if it reads.
func NodeLoad(r pubnodetool.Ring, hostID string) (int64, bool) {
	row, ok := r.ByHostID(hostID)
	if !ok {
		return 0, false
	}
	l, ok := ParseLoad(row.Load)
	return int64(l), ok
}

// Throttled is steps with the sources' stream throughput set around the streaming the
// steps cause (a scale-up's bootstraps, a replacement): recorded and set right before
// the first step of a kind in from, restored right after the last of a kind in until.
// The steps name no pod: they act on the plan's sources together. list comes back as it
// is when it has no such span.
func Throttled(list []record.Step, from, until []string) []record.Step {
	first, last := -1, -1
	for i, s := range list {
		if first < 0 && slices.Contains(from, s.Kind) {
			first = i
		}
		if slices.Contains(until, s.Kind) {
			last = i
		}
	}
	if first < 0 || last < first {
		return list
	}
	out := append([]record.Step{}, list[:first]...)
	out = append(out, checkpoint.PendingStep(record.StepRecordThroughput, ""), checkpoint.PendingStep(record.StepSetThroughput, ""))
	out = append(out, list[first:last+1]...)
	out = append(out, checkpoint.PendingStep(record.StepRestoreThroughput, ""))
	return append(out, list[last+1:]...)
}

// ThroughputAccess is what --stream-throughput needs besides the kind's access: the
// owner's mark written on each node's pod before its limit is set, and removed once it
// is put back (steps.ThroughputMarkAnnotation).
func ThroughputAccess(req pub.Request, ns string) []pub.Access {
	if req.StreamThroughput == "" {
		return nil
	}
	return []pub.Access{{Resource: "pods", Verb: "patch", Namespace: ns, Why: "mark a node's pod with the operation that set its stream throughput"}}
}
