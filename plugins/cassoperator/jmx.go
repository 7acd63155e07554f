package cassoperator

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// JMXSecretName is the datacenter's superuser Secret (keys username and password),
// whose credentials nodetool needs when JMX authentication is on (kubectl-k8ssandra's
// nodetool injects the same): spec.superuserSecretName when set, else
// <cleaned clusterName>-superuser, the one cass-operator generates
// (apis/cassandra/v1beta1/cassandradatacenter_types.go GetSuperuserSecretNamespacedName).
func (a *Adapter) JMXSecretName(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	if name, _, _ := unstructured.NestedString(u.Object, "spec", "superuserSecretName"); name != "" {
		return name
	}
	cluster, _, _ := unstructured.NestedString(u.Object, "spec", "clusterName")
	if cluster == "" {
		return ""
	}
	return CleanupForKubernetes(cluster) + "-superuser"
}
