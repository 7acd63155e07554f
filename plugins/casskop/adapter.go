package casskop

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// Plugin is CassKop as cmd/kubectl-cassandra/main.go hands it to the CLI.
type Plugin struct{}

// Name is CassKop's name in checkpoints (topology.Cluster.Operator).
func (Plugin) Name() string { return "casskop" }

// Words implements operator.Operator.
func (Plugin) Words() operator.Words {
	return operator.Words{Title: "CassKop", Kind: Kind, Count: CountField}
}

// Connect returns an adapter on c; its API version is resolved on first use.
func (Plugin) Connect(c operator.Clients) operator.Adapter {
	return &Adapter{Clients: c}
}

var _ operator.Adapter = (*Adapter)(nil)
var _ operator.StatusRepair = (*Adapter)(nil)

// Name is CassKop's name in checkpoints.
func (a *Adapter) Name() string { return Plugin{}.Name() }

// Title is how messages name CassKop.
func (a *Adapter) Title() string { return Plugin{}.Words().Title }

// Kind is the cluster resource's kind.
func (a *Adapter) Kind() string { return Kind }

// GroupResource names the cluster resource.
func (a *Adapter) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: Group, Resource: Resource}
}

// Container is the Cassandra container of CassKop's pods.
func (a *Adapter) Container() string { return Container }

// ClusterSelector selects every pod of cluster; "" selects the Cassandra pods of every
// CassandraCluster.
func (a *Adapter) ClusterSelector(cluster string) string {
	if cluster == "" {
		return LabelApp + "=cassandracluster," + LabelCluster
	}
	return LabelCluster + "=" + cluster
}

// PodCluster is the CassandraCluster a pod with labels belongs to.
func (a *Adapter) PodCluster(labels map[string]string) (string, bool) {
	owner := labels[LabelCluster]
	if owner == "" || labels[LabelApp] != "cassandracluster" {
		return "", false
	}
	return owner, true
}

// ControllerOf describes d if it is a CassKop Deployment.
func (a *Adapter) ControllerOf(d *appsv1.Deployment) (operator.Controller, bool) {
	return OperatorOf(d)
}

// DCSpec is dc's count in one CassandraCluster.
func (a *Adapter) DCSpec(ns, name, dc string) operator.DCSpec {
	return DCSpec{A: a, NS: ns, Name: name, DCCounts: a.counts(ns, name, dc)}
}

// OperatorStatus reads and repairs CassKop's per-rack status of one cluster.
func (a *Adapter) OperatorStatus(ns, name string, now func() time.Time) operator.OperatorState {
	return OperatorStatus{A: a, NS: ns, Name: name, Now: now}
}
