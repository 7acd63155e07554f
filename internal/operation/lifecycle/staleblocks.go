package lifecycle

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// scriptReaper is a kind that writes blocks of its own into the cluster's start script
// (replace-node: the replace option), each carrying its operation's ID: it lists the
// blocks of operations that are gone, and takes them out.
type scriptReaper interface {
	StaleScriptBlocks(ctx context.Context, kube kubernetes.Interface, ns, name, key string, stands func(id string) (bool, error)) ([]string, error)
	ReapScriptBlocks(ctx context.Context, kube kubernetes.Interface, ns, name, key string, stands func(id string) (bool, error)) ([]string, error)
}

// reapStaleBlocks is what a plan, resume and abort do with the start script of the
// cluster (operators with one: CassKop's pre_run.sh), beside the stale pause holders:
// a block of a kind's (scriptReaper) whose operation no checkpoint in the namespace
// holds any more is taken out (its record wiped, its cluster deleted), said on stderr.
// report only says so (status changes nothing). Failures are warnings: the command
// goes on, and its own steps read the script as it is.
func (l *Lifecycle) reapStaleBlocks(ctx context.Context, stands func(id string) (bool, error), report bool) {
	ss, ok := l.Adapter.(operator.StartScript)
	if !ok {
		return
	}
	_, u, err := l.Adapter.Get(ctx, l.Cluster.Namespace, l.Cluster.Name)
	if err != nil {
		return // the command's own read says what is wrong
	}
	name, key, err := ss.StartScript(u)
	if err != nil || name == "" {
		return // no start script: no block
	}
	l.reapScriptKinds(ctx, l.Cluster.Namespace, name, key, stands, report)
}

// reapScriptKinds reaps (or, with report, only lists) the blocks of every kind that
// writes some (scriptReaper) in key of ConfigMap ns/name.
func (l *Lifecycle) reapScriptKinds(ctx context.Context, ns, name, key string, stands func(id string) (bool, error), report bool) {
	for _, k := range l.Kinds.All() {
		if r, ok := k.(scriptReaper); ok {
			l.reapScript(ctx, k.Info().Name, r, ns, name, key, stands, report)
		}
	}
}

// reapScript reaps (or, with report, only lists) kind's blocks in key of ConfigMap
// ns/name.
func (l *Lifecycle) reapScript(ctx context.Context, kind string, r scriptReaper, ns, name, key string, stands func(id string) (bool, error), report bool) {
	if report {
		stale, err := r.StaleScriptBlocks(ctx, l.Kube, ns, name, key, stands)
		if err == nil && len(stale) > 0 {
			fmt.Fprintf(l.ErrOut, "warning: key %s of ConfigMap %s/%s holds %s blocks of operations that are gone (%s): the next %s, resume or abort takes them out.\n",
				key, ns, name, kind, strings.Join(stale, ", "), kind)
		}
		return
	}
	reaped, err := r.ReapScriptBlocks(ctx, l.Kube, ns, name, key, stands)
	if err != nil {
		fmt.Fprintf(l.ErrOut, "warning: %v; the next command tries again\n", err)
		return
	}
	if len(reaped) > 0 {
		fmt.Fprintf(l.ErrOut, "Key %s of ConfigMap %s/%s held %s blocks of operations that are gone (%s): took them out, the rest of the script as it was.\n",
			key, ns, name, kind, strings.Join(reaped, ", "))
	}
}

// operationStands judges operation IDs against the checkpoints of the namespace's
// clusters, listed once on first use (one judge serves all of a command's reaping). A list that fails, or a checkpoint that cannot
// be decoded (whose it is is unknown), leaves every operation standing.
func (l *Lifecycle) operationStands(ctx context.Context, ns string) func(id string) (bool, error) {
	var (
		mu     sync.Mutex // the reapers judge at once (reapAtOnce)
		ids    map[string]bool
		failed error
	)
	return func(id string) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if ids == nil && failed == nil {
			ids, failed = l.checkpointIDs(ctx, ns)
		}
		if failed != nil {
			return true, failed
		}
		return ids[id], nil
	}
}

// checkpointIDs are the operation IDs the checkpoints of the namespace's clusters hold.
func (l *Lifecycle) checkpointIDs(ctx context.Context, ns string) (map[string]bool, error) {
	cls, err := l.Adapter.List(ctx, ns)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, cl := range cls {
		v, ok := cl.Annotations[checkpoint.Annotation]
		if !ok {
			continue
		}
		cp, err := checkpoint.Decode(v, cl.UID, l.Kinds.Schemas())
		if err != nil {
			return nil, fmt.Errorf("the checkpoint of %s/%s cannot be read: %w", cl.Namespace, cl.Name, err)
		}
		ids[cp.OperationID] = true
	}
	return ids, nil
}

// WarnStaleBlocks only says which blocks of the start script belong to operations that
// are gone (status changes nothing; the next replace-node, resume or abort reaps them).
func (l *Lifecycle) WarnStaleBlocks(ctx context.Context) {
	l.reapStaleBlocks(ctx, l.operationStands(ctx, l.Cluster.Namespace), true)
}

// reapBlocksAfterGone is reapStaleBlocks once the cluster resource is gone: it named the
// start script, so every ConfigMap of namespace ns holding a text of ours is looked at
// (a cluster created again under the same name, on the same ConfigMap, would start its
// pods with a gone operation's option). A list refused is said: the blocks stay until
// a command that can list them, or an SRE, takes them out.
func (l *Lifecycle) reapBlocksAfterGone(ctx context.Context, ns string, stands func(id string) (bool, error)) {
	if _, ok := l.Adapter.(operator.StartScript); !ok {
		return
	}
	cms, err := l.Kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(l.ErrOut, "warning: cannot list the ConfigMaps of namespace %s to take out blocks of operations that are gone: %v\n", ns, err)
		return
	}
	for _, cm := range cms.Items {
		for _, key := range slices.Sorted(maps.Keys(cm.Data)) {
			if strings.Contains(cm.Data[key], "kubectl-cassandra") {
				l.reapScriptKinds(ctx, ns, cm.Name, key, stands, false)
			}
		}
	}
}
