// Package operation is what every kind of rack operation shares on the plugin's side:
// the Registry the CLI looks kinds up in (registry.go), the Planner, its reads and the new
// checkpoint (plan.go, reads.go), the Toolkit it is to every kind (toolkit.go), the
// preflight checks and the access a plan needs (preflight.go), and the Runner that runs
// or resumes a checkpoint through the engine (run.go). The Kind contract is
// pkg/operation's. Each of the plugin's own kinds is one package below (scaledown,
// scaleup, restart, replacenode); internal/operation/kinds is their table. A new kind is
// a new package implementing pkg/operation's Kind, plus one line there.
package operation

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// NodeInfo is what the planner asks Cassandra: a node's Host ID and mode, the ring,
// keyspaces.
type NodeInfo interface {
	nodetool.StatusReader
	Info(ctx context.Context, pod string) (nodetool.Info, error)
	Netstats(ctx context.Context, pod string) (nodetool.Netstats, error)
	DescribeCluster(ctx context.Context, pod string) (nodetool.ClusterDescription, error)
}

// Planner reads the real world and turns a Request into a Plan. It changes nothing. It
// is the Toolkit (pkg/operation) of every Env the plugin plans with (toolkit.go).
type Planner struct {
	Client   kubernetes.Interface
	Nodetool NodeInfo
	// Exec runs a command in a pod with stdin (cqlsh: internal/cql); nil when the
	// pod exec cannot feed one.
	Exec  cql.Streamer
	Clock func() time.Time
	// Holder identifies this run in the checkpoint (Self() when empty).
	Holder record.Holder
	// ahead are the reads started before the plan asked for them (ReadAhead).
	ahead readsAhead
}

// DataTemplate is the claim template of the Cassandra data volume ("data" in the
// operators' StatefulSets).
func DataTemplate(sts *appsv1.StatefulSet) string {
	for _, t := range sts.Spec.VolumeClaimTemplates {
		if t.Name == "data" {
			return t.Name
		}
	}
	if len(sts.Spec.VolumeClaimTemplates) > 0 {
		return sts.Spec.VolumeClaimTemplates[0].Name
	}
	return ""
}

// Now is the planner's clock, in UTC.
func (p *Planner) Now() time.Time {
	if p.Clock != nil {
		return p.Clock().UTC()
	}
	return time.Now().UTC()
}

// SortedKeys returns the keys of m in order.
func SortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ErrScaleUp is what ScaleDown answers when the request grows a rack: plan it with
// ScaleUp instead.
type ErrScaleUp struct{ Msg string }

func (e *ErrScaleUp) Error() string { return e.Msg + ": that is a scale-up" }

// RackNow is a rack's StatefulSet and pods as the planner found them.
type RackNow struct {
	Rack topology.Rack
	STS  *appsv1.StatefulSet
	// Pods maps ordinal → pod; Cur is the StatefulSet's replicas.
	Pods map[int]corev1.Pod
	Cur  int
}

// CheckPods refuses unless every pod up to the replica count exists, Running and Ready,
// and (unless extraOK) none exists beyond it. what names the operation ("scale-up").
func (st RackNow) CheckPods(ns, what string, extraOK bool) error {
	for i := 0; i < st.Cur; i++ {
		if err := st.PodProblem(ns, what, i); err != nil {
			return err
		}
	}
	for i, pod := range st.Pods {
		if i >= st.Cur && !extraOK {
			return exit.Refusedf("pod %s exists although StatefulSet %s has %d replicas (terminating?); wait until it is gone; nothing changed", pod.Name, st.STS.Name, st.Cur)
		}
	}
	return nil
}

// PodProblem is CheckPods' refusal for the pod of ordinal i (nil when it exists,
// Running and Ready, not being deleted).
func (st RackNow) PodProblem(ns, what string, i int) error {
	pod, ok := st.Pods[i]
	if !ok {
		return exit.Refusedf("pod %s-%d of StatefulSet %s does not exist; every pod must be Running and Ready before a %s; nothing changed", st.STS.Name, i, st.STS.Name, what)
	}
	if !kube.PodReady(&pod) || pod.DeletionTimestamp != nil {
		return exit.Refusedf("pod %s is not Ready; every pod of rack %s must be Ready before a %s (check: kubectl describe pod -n %s %s); nothing changed", pod.Name, st.Rack.Name, what, ns, pod.Name)
	}
	return nil
}

// ReadCheckedRack is ReadRack then CheckPods (no pod beyond the replicas).
func (p *Planner) ReadCheckedRack(ctx context.Context, ns string, r topology.Rack, what string) (RackNow, error) {
	st, err := p.ReadRack(ctx, ns, r)
	if err != nil {
		return st, err
	}
	return st, st.CheckPods(ns, what, false)
}

// ReadRing reads `nodetool status` from the first of the states' pods that answers, and
// refuses unless every node of dc is Up/Normal (CheckUN).
func (p *Planner) ReadRing(ctx context.Context, cl topology.Cluster, dc topology.DC, states []RackNow, what string) (pubnodetool.Ring, string, error) {
	var pods []string
	for _, st := range states {
		for i := 0; i < st.Cur; i++ {
			pods = append(pods, st.Pods[i].Name)
		}
	}
	r, i, errs := nodetool.FirstRing(ctx, p.Nodetool, pods)
	if i < 0 {
		return r, "", exit.Refusedf("cannot read the ring (%s); a %s needs a readable ring, nothing changed", strings.Join(errs, "; "), what)
	}
	reader := pods[i]
	if err := CheckUN(r, cl, dc); err != nil {
		return r, "", err
	}
	return r, reader, nil
}

// CheckUN refuses unless every node of dc in the ring is Up/Normal.
func CheckUN(r pubnodetool.Ring, cl topology.Cluster, dc topology.DC) error {
	var bad []string
	dead := false
	for _, n := range r.Nodes {
		if n.DC == dc.Name && n.Code() != "UN" {
			bad = append(bad, fmt.Sprintf("%s (%s) is %s", n.Address, n.HostID, n.Code()))
			dead = dead || n.Code() == "DN"
		}
	}
	if len(bad) > 0 {
		return exit.Refusedf("not every node of datacenter %s is Up/Normal: %s; wait until they are (kubectl cassandra status %s), nothing changed%s", dc.Name, strings.Join(bad, ", "), cl.Name, deadHint(dead, cl))
	}
	return nil
}

// deadHint is what a refusal adds when a node is DN: if it stays down, it is dead, and
// a dead node cannot be decommissioned (its data cannot stream from it).
func deadHint(dead bool, cl topology.Cluster) string {
	if !dead {
		return ""
	}
	return fmt.Sprintf(". A node that stays DN is dead and cannot be decommissioned: replace it (kubectl cassandra replace-node -n %s %s --pod POD), "+
		"or, to make the ring smaller instead, remove it from a live node (nodetool removenode HOST_ID: its ranges are streamed from the other replicas; docs/how-it-works/replace.md §5)",
		cl.Namespace, cl.Name)
}

// SelectRacks is the datacenter and racks a scale asks for. It refuses rack counts the
// operator's spec cannot hold once scaled (CassKop keeps one count per datacenter, so
// one rack of several cannot be scaled alone).
func SelectRacks(cl topology.Cluster, req pub.Request, counts operator.Counts) (topology.DC, []topology.Rack, error) {
	dc, racks, err := cl.Select(req.DC, req.Rack)
	if err != nil {
		return dc, nil, exit.Usagef("%v", err)
	}
	want := dc.RackNodes()
	for _, r := range racks {
		want[r.Name] = req.Nodes
	}
	if err := counts.CheckRackNodes(dc.Name, want); err != nil {
		return dc, nil, exit.Refusedf("datacenter %s has %d racks (%s) and %v: "+
			"scaling only rack %s would leave the racks unequal, which the cluster resource cannot represent. "+
			"Scale the whole datacenter instead, rack by rack: kubectl cassandra scale %s --dc %s --nodes %d; nothing changed",
			dc.Name, len(dc.Racks), strings.Join(cl.RackNames(dc.Name), ", "), err, req.Rack, cl.Name, dc.Name, req.Nodes)
	}
	return dc, racks, nil
}

// NewCheckpoint fills what every checkpoint of kind has; the caller adds target, nodes
// and steps. idPrefix begins the operation's ID ("scale").
func (p *Planner) NewCheckpoint(cl topology.Cluster, kind pub.Kind, idPrefix string, req pub.Request) *record.Checkpoint {
	now := p.Now()
	holder := p.Holder
	if holder.Host == "" {
		holder = Self()
	}
	return &record.Checkpoint{
		SchemaVersion:  kind.Info().Checkpoint.Version,
		OperationID:    fmt.Sprintf("%s-%s-%s", idPrefix, now.Format("20060102-150405"), rand.String(5)),
		Kind:           kind.Info().Name,
		Operator:       cl.Operator,
		Namespace:      cl.Namespace,
		Cluster:        cl.Name,
		ClusterUID:     cl.UID,
		StartedBy:      holder,
		Holder:         holder,
		StartedAt:      now,
		UpdatedAt:      now,
		Force:          req.Force,
		PausedOperator: req.Pause,
	}
}

// RackNames are the racks' names, in order.
func RackNames(racks []topology.Rack) []string {
	var names []string
	for _, r := range racks {
		names = append(names, r.Name)
	}
	return names
}

// SeedRefusal says why pod, which the operator lists as a seed, is not created (entry:
// its entry in the list, "" when not read), in the operator's words when it has them.
func SeedRefusal(a operator.Adapter, cl topology.Cluster, pod, entry string) string {
	if s, ok := a.(operator.Seeds); ok {
		return s.SeedRefusal(cl.Namespace, cl.Name, pod, entry)
	}
	return fmt.Sprintf("pod %s is listed as a seed of %s: created now it would start as a seed and skip bootstrap, showing UN without its data; "+
		"take it off the operator's seed list, then run the command again", pod, cl.Name)
}

// PauseWarnings say what pausing the operator leaves unmanaged besides the cluster (a
// plan shows them); kind names the cluster resource ("CassandraCluster").
func PauseWarnings(pause *record.PausedOperator, kind string) []string {
	if pause == nil {
		return nil
	}
	var w []string
	for _, h := range pause.Joined {
		w = append(w, fmt.Sprintf("operator Deployment %s/%s is already paused by operation %s: this operation joins the pause, and the operator is restored (to %d replicas) only when the last of them ends", pause.Namespace, pause.Name, h, pause.Replicas))
	}
	for _, h := range pause.Adopted {
		w = append(w, fmt.Sprintf("operator Deployment %s/%s is still paused by operation %s, whose record is gone: this operation takes that pause over and restores the operator (to %d replicas) when it ends", pause.Namespace, pause.Name, h, pause.Replicas))
	}
	for _, other := range pause.Unmanaged {
		w = append(w, fmt.Sprintf("%s %s is also managed by %s/%s and stays unmanaged while it is paused", kind, other, pause.Namespace, pause.Name))
	}
	if pause.UnmanagedUnknown != "" {
		w = append(w, fmt.Sprintf("the other %ss %s/%s manages stay unmanaged while it is paused too, but cannot be named: %s", kind, pause.Namespace, pause.Name, pause.UnmanagedUnknown))
	}
	return w
}
