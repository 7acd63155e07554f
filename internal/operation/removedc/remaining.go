package removedc

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

// remaining is how remove-dc reads the datacenters that stay: the ring, the keyspaces
// and the schema are asked of their pods only, never of a node that is leaving, and
// never of another cluster's (a ring that never listed the datacenter would say it is
// gone): the plan finds them in the ring it read, the steps ask the pods it named.
type remaining struct {
	kube     kubernetes.Interface
	nodetool nodetool.StatusReader
	cql      cql.Client
	ns       string
	// selector selects the candidate pods (the plan: every pod of the operator in the
	// namespace); inDC tells a pod of the datacenter removed. named, when set, are the
	// only pods asked (the steps: the readers the plan found).
	selector string
	inDC     func(pod *corev1.Pod) bool
	named    map[string]bool
}

// dcMember is inDC for the racks of dc and the pods named in planned.
func dcMember(racks []topology.Rack, planned map[string]bool) func(*corev1.Pod) bool {
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

// readers lists the Ready pods of the datacenters that stay, by name.
func (m remaining) readers(ctx context.Context) ([]corev1.Pod, error) {
	l, err := m.kube.CoreV1().Pods(m.ns).List(ctx, metav1.ListOptions{LabelSelector: m.selector})
	if err != nil {
		return nil, fmt.Errorf("cannot list the cluster's pods: %w", err)
	}
	var out []corev1.Pod
	for i := range l.Items {
		p := &l.Items[i]
		if (m.named == nil || m.named[p.Name]) && !m.inDC(p) && p.DeletionTimestamp == nil && kube.PodReady(p) && p.Status.PodIP != "" {
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ring reads the ring from the first pod of the datacenters that stay that answers
// with a ring accept takes (nil: any). No reader, or none answering, is an error: a
// ring nobody read is unknown.
func (m remaining) ring(ctx context.Context) (pubnodetool.Ring, corev1.Pod, error) {
	return m.ringWith(ctx, nil)
}

func (m remaining) ringWith(ctx context.Context, accept func(pubnodetool.Ring) bool) (pubnodetool.Ring, corev1.Pod, error) {
	pods, err := m.readers(ctx)
	if err != nil {
		return pubnodetool.Ring{}, corev1.Pod{}, err
	}
	if len(pods) == 0 {
		return pubnodetool.Ring{}, corev1.Pod{}, fmt.Errorf("no pod of another datacenter is Ready to read the ring from")
	}
	var failed []string
	for _, p := range pods {
		ring, i, errs := nodetool.FirstRing(ctx, m.nodetool, []string{p.Name})
		switch {
		case i < 0:
			failed = append(failed, errs...)
		case accept != nil && !accept(ring):
			failed = append(failed, p.Name+": its ring does not list the datacenter's nodes (another cluster)")
		default:
			return ring, p, nil
		}
	}
	return pubnodetool.Ring{}, corev1.Pod{}, fmt.Errorf("no pod of another datacenter answered nodetool status (%s)", strings.Join(failed, "; "))
}

// keyspaces reads every keyspace's replication through cqlsh in reader.
func (m remaining) keyspaces(ctx context.Context, reader corev1.Pod) ([]cql.Keyspace, error) {
	if m.cql.Exec == nil {
		return nil, fmt.Errorf("this pod exec cannot run cqlsh with its credentials on stdin")
	}
	return m.cql.Replication(ctx, reader.Name, reader.Status.PodIP)
}

// sameCluster keeps the pods whose address is a node of ring outside dc: the readers of
// the datacenters that stay, of this cluster.
func sameCluster(pods []corev1.Pod, ring pubnodetool.Ring, dc string) []string {
	var out []string
	for _, p := range pods {
		if n, ok := ring.ByAddress(p.Status.PodIP); ok && n.DC != dc {
			out = append(out, p.Name)
		}
	}
	return out
}

// dcNodes lists the ring's nodes of dc, and the ones of the other datacenters that
// are not Up/Normal.
func dcNodes(r pubnodetool.Ring, dc string) (mine []pubnodetool.Node, otherNotUN []string) {
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
