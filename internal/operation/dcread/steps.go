package dcread

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Open is the step library's World behind kw for an operation on a datacenter, and the
// operation's record as extOf decodes it. The run waits for no status of the
// datacenter's resource to settle: a new datacenter is the operator's to settle (each
// step reads it), a removed one's resource is deleted.
func Open[E any](kw operation.World, extOf func(*record.Checkpoint) (E, error)) (*steps.World, E, error) {
	var e E
	w, err := steps.Of(kw)
	if err != nil {
		return nil, e, err
	}
	w.Settler = nil
	if e, err = extOf(w.CP); err != nil {
		return nil, e, err
	}
	return w, e, nil
}

// Named are the readers of a datacenter operation's steps: only the pods the plan
// named (readers), less those exclude tells, through w's clients; cqlsh logs in with
// the Secret cqlSecret ("": none).
func Named(w *steps.World, readers []string, cqlSecret string, exclude func(*corev1.Pod) bool) Readers {
	named := map[string]bool{}
	for _, p := range readers {
		named[p] = true
	}
	return Readers{Kube: w.Kube, Nodetool: w.Nodetool, NS: w.CP.Namespace, Named: named, Exclude: exclude,
		CQL: cql.Client{Exec: w.Exec, Auth: cql.SecretAuth(w.Kube, w.CP.Namespace, cqlSecret)}}
}
