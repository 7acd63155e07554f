package fakeadapter

// The fake operator's names: none is CassKop's or cass-operator's, so a core test that
// passes on them assumes no real operator's.
const (
	OperatorName = "fake"
	Title        = "fake-operator"

	Group    = "fake.kubectl-cassandra.test"
	Version  = "v1"
	Resource = "fakecassandras"
	Kind     = "FakeCassandra"
	ListKind = "FakeCassandraList"

	// Container is the Cassandra container of its pods.
	Container = "server"
	// ClaimTemplate is the claim template of a rack's data volume.
	ClaimTemplate = "storage"
	// CountField is the spec field of a rack's count (spec.datacenters[].racks[].members).
	CountField = "members"

	LabelCluster = Group + "/cluster"
	LabelDC      = Group + "/datacenter"
	LabelRack    = Group + "/rack"
	// LabelBusy on a pod says the operator has an operation queued or running on it.
	LabelBusy = Group + "/busy"
	// LabelOperator marks the fake operator's Deployment; AnnotationWatch on it names
	// the namespace it manages (absent: every namespace).
	LabelOperator   = Group + "/operator"
	AnnotationWatch = Group + "/watch"
)

// StatefulSetName is the StatefulSet of a rack: fake-<cluster>-<dc>-<rack>.
func StatefulSetName(cluster, dc, rack string) string {
	return "fake-" + cluster + "-" + dc + "-" + rack
}

// RackLabels are the labels of a rack's StatefulSet, pods and claims.
func RackLabels(cluster, dc, rack string) map[string]string {
	return map[string]string{LabelCluster: cluster, LabelDC: dc, LabelRack: rack}
}

// ClaimName is the data claim of pod.
func ClaimName(pod string) string { return ClaimTemplate + "-" + pod }

// FieldManager names the adapter's writes.
const FieldManager = "kubectl-cassandra"
