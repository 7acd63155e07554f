package casskop

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// StartScript implements operator.StartScript: the key pre_run.sh of the ConfigMap
// spec.configMapName, which CassKop mounts at /configmap in the bootstrap init
// container only, whose /bootstrap.sh runs it under `set -e` before run.sh, on every
// start of every pod (docs/how-it-works/replace.md §7.2: generator.go, bootstrap.sh).
func (a *Adapter) StartScript(u *unstructured.Unstructured) (configMap, key string, err error) {
	name, _, _ := unstructured.NestedString(u.Object, "spec", "configMapName")
	if name == "" {
		return "", "", fmt.Errorf("CassandraCluster %s/%s names no ConfigMap (spec.configMapName): CassKop runs a pre_run.sh only from that ConfigMap, "+
			"the one place that reaches a single pod before Cassandra starts. Create a ConfigMap (an empty one will do) and set spec.configMapName "+
			"(CassKop then rolls every pod: let it finish), or replace the node by hand (docs/how-it-works/replace.md §7)", u.GetNamespace(), u.GetName())
	}
	return name, "pre_run.sh", nil
}

// ConfDir implements operator.StartScript: the bootstrap emptyDir, mounted at
// /etc/cassandra in the bootstrap init container and the cassandra container
// (generator.go), holds the jvm options files Cassandra reads.
func (a *Adapter) ConfDir() string { return "/etc/cassandra" }
