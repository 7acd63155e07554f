package operator

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// StartScript is offered by an operator whose pods run a shell script of the user's,
// kept in a ConfigMap, before Cassandra starts, on every start of every pod (CassKop:
// key pre_run.sh of the ConfigMap spec.configMapName, run by the bootstrap init
// container under `set -e`: docs/how-it-works/replace.md §7.2). The plugin starts one pod
// with a JVM option through it (replace-node): its part of the script is a no-op that
// exits 0 on every other pod, and is taken out again once done.
type StartScript interface {
	// StartScript names the ConfigMap and key of the script of cluster u; configMap is
	// "" when the cluster names none, and err then says what the user can do.
	StartScript(u *unstructured.Unstructured) (configMap, key string, err error)
	// ConfDir is the directory in which the script finds the Cassandra configuration
	// the cassandra container reads (its jvm options files): "/etc/cassandra".
	ConfDir() string
}
