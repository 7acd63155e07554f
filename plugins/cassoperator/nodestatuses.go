package cassoperator

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// NodeStatus is one entry of status.nodeStatuses: what cass-operator recorded of a
// pod's node when it started (apis/cassandra/v1beta1/cassandradatacenter_types.go
// CassandraNodeStatus).
type NodeStatus struct {
	HostID string
	IP     string
	Rack   string
}

// NodeStatuses reads status.nodeStatuses of a CassandraDatacenter, by pod name.
func NodeStatuses(u *unstructured.Unstructured) map[string]NodeStatus {
	m, _, _ := unstructured.NestedMap(u.Object, "status", "nodeStatuses")
	out := make(map[string]NodeStatus, len(m))
	for pod, v := range m {
		e, _ := v.(map[string]any)
		s := func(k string) string { x, _ := e[k].(string); return x }
		out[pod] = NodeStatus{HostID: s("hostID"), IP: s("ip"), Rack: s("rack")}
	}
	return out
}
