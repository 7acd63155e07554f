package casskop

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// JMXSecretName is the Secret CassKop gives its Cassandra containers as JMX_USER and
// JMX_PASSWORD (spec.imageJolokiaSecret, keys username and password; docs/how-it-works/casskop.md §1.2), or
// "" when the cluster names none.
func (a *Adapter) JMXSecretName(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	name, _, _ := unstructured.NestedString(u.Object, "spec", "imageJolokiaSecret", "name")
	return name
}
