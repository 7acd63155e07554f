// Package dcread reads a cluster from the pods of some of its datacenters only: the
// ones that stay while another is removed (remove-dc), the source while one is added
// (add-dc). The ring, the keyspaces and the schema are asked of those pods, never of a
// node that is leaving or joining, and never of another cluster's.
package dcread

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Readers is how an operation reads the datacenters it does not change: the plan finds
// their pods in the ring it read, the steps ask the pods it named.
type Readers struct {
	Kube     kubernetes.Interface
	Nodetool nodetool.StatusReader
	CQL      cql.Client
	NS       string
	// Selector selects the candidate pods (the plan: every pod of the operator in the
	// namespace); Exclude tells a pod of the datacenter changed. Named, when set, are the
	// only pods asked (the steps: the readers the plan found).
	Selector string
	Exclude  func(pod *corev1.Pod) bool
	Named    map[string]bool
}

// Member is Exclude for the racks of dc and the pods named in planned.
func Member(racks []topology.Rack, planned map[string]bool) func(*corev1.Pod) bool {
	var sels []labels.Selector
	for _, r := range racks {
		if s, err := labels.Parse(r.LabelSelector()); err == nil {
			sels = append(sels, s)
		}
	}
	return func(p *corev1.Pod) bool {
		if planned[p.Name] {
			return true
		}
		for _, s := range sels {
			if s.Matches(labels.Set(p.Labels)) {
				return true
			}
		}
		return false
	}
}

// Pods lists the Ready pods of the datacenters that stay, by name.
func (m Readers) Pods(ctx context.Context) ([]corev1.Pod, error) {
	l, err := m.Kube.CoreV1().Pods(m.NS).List(ctx, metav1.ListOptions{LabelSelector: m.Selector})
	if err != nil {
		return nil, fmt.Errorf("cannot list the cluster's pods: %w", err)
	}
	var out []corev1.Pod
	for i := range l.Items {
		p := &l.Items[i]
		if (m.Named == nil || m.Named[p.Name]) && !m.Exclude(p) && p.DeletionTimestamp == nil && kube.PodReady(p) && p.Status.PodIP != "" {
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Ring reads the ring from the first pod of the datacenters that stay that answers
// with a ring accept takes (nil: any). No reader, or none answering, is an error: a
// ring nobody read is unknown.
func (m Readers) Ring(ctx context.Context) (pubnodetool.Ring, corev1.Pod, error) {
	return m.RingWith(ctx, nil)
}

// RingWith is Ring, of a ring accept takes.
func (m Readers) RingWith(ctx context.Context, accept func(pubnodetool.Ring) bool) (pubnodetool.Ring, corev1.Pod, error) {
	pods, err := m.Pods(ctx)
	if err != nil {
		return pubnodetool.Ring{}, corev1.Pod{}, err
	}
	if len(pods) == 0 {
		return pubnodetool.Ring{}, corev1.Pod{}, fmt.Errorf("no reader pod is Ready to read the ring from")
	}
	var failed []string
	for _, p := range pods {
		ring, i, errs := nodetool.FirstRing(ctx, m.Nodetool, []string{p.Name})
		switch {
		case i < 0:
			failed = append(failed, errs...)
		case accept != nil && !accept(ring):
			failed = append(failed, p.Name+": its ring does not list the datacenter's nodes (another cluster)")
		default:
			return ring, p, nil
		}
	}
	return pubnodetool.Ring{}, corev1.Pod{}, fmt.Errorf("no reader pod answered nodetool status (%s)", strings.Join(failed, "; "))
}

// Keyspaces reads every keyspace's replication through cqlsh in reader.
func (m Readers) Keyspaces(ctx context.Context, reader corev1.Pod) ([]cql.Keyspace, error) {
	if m.CQL.Exec == nil {
		return nil, fmt.Errorf("this pod exec cannot run cqlsh with its credentials on stdin")
	}
	return m.CQL.Replication(ctx, reader.Name, reader.Status.PodIP)
}

// SameCluster keeps the pods whose address is a node of ring outside dc: the readers of
// the datacenters that stay, of this cluster.
func SameCluster(pods []corev1.Pod, ring pubnodetool.Ring, dc string) []string {
	var out []string
	for _, p := range pods {
		if n, ok := ring.ByAddress(p.Status.PodIP); ok && n.DC != dc {
			out = append(out, p.Name)
		}
	}
	return out
}

// DCNodes lists the ring's nodes of dc, and the ones of the other datacenters that
// are not Up/Normal.
func DCNodes(r pubnodetool.Ring, dc string) (mine []pubnodetool.Node, otherNotUN []string) {
	for _, n := range r.Nodes {
		switch {
		case n.DC == dc:
			mine = append(mine, n)
		case n.Code() != "UN":
			otherNotUN = append(otherNotUN, fmt.Sprintf("%s (%s, datacenter %s)", n.Address, n.Code(), n.DC))
		}
	}
	return mine, otherNotUN
}

// KeyspacesNow reads every keyspace's replication through cqlsh in the first reader
// whose ring answers, and says which reader it asked.
func (m Readers) KeyspacesNow(ctx context.Context) ([]cql.Keyspace, corev1.Pod, error) {
	_, reader, err := m.Ring(ctx)
	if err != nil {
		return nil, reader, err
	}
	ks, err := m.Keyspaces(ctx, reader)
	return ks, reader, err
}
