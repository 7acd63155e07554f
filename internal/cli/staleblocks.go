package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/replacenode"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// reapStaleBlocks is what replace-node's plan, resume and abort do with the start
// script of the cluster (operators with one: CassKop's pre_run.sh), beside the stale
// pause holders: a replace-node block whose operation no checkpoint in the namespace
// holds any more is taken out (its record wiped, its cluster deleted), said on stderr.
// report only says so (status changes nothing). Failures are warnings: the command
// goes on, and its own steps read the script as it is.
func (o *Options) reapStaleBlocks(ctx context.Context, s *session, report bool) {
	ss, ok := s.adapter.(operator.StartScript)
	if !ok {
		return
	}
	_, u, err := s.adapter.Get(ctx, s.cluster.Namespace, s.cluster.Name)
	if err != nil {
		return // the command's own read says what is wrong
	}
	name, key, err := ss.StartScript(u)
	if err != nil || name == "" {
		return // no start script: no block
	}
	stands := o.operationStands(ctx, s)
	ns := s.cluster.Namespace
	if report {
		_, stale, err := replacenode.StaleBlocks(ctx, s.c.Kube, ns, name, key, stands)
		if err == nil && len(stale) > 0 {
			fmt.Fprintf(o.ErrOut, "warning: key %s of ConfigMap %s/%s holds replace-node blocks of operations that are gone (%s): the next replace-node, resume or abort takes them out.\n",
				key, ns, name, strings.Join(stale, ", "))
		}
		return
	}
	reaped, err := replacenode.ReapBlocks(ctx, s.c.Kube, ns, name, key, stands)
	if err != nil {
		fmt.Fprintf(o.ErrOut, "warning: %v; the next command tries again\n", err)
		return
	}
	if len(reaped) > 0 {
		fmt.Fprintf(o.ErrOut, "Key %s of ConfigMap %s/%s held replace-node blocks of operations that are gone (%s): took them out, the rest of the script as it was.\n",
			key, ns, name, strings.Join(reaped, ", "))
	}
}

// operationStands judges operation IDs against the checkpoints of the namespace's
// clusters, listed once on first use. A list that fails, or a checkpoint that cannot
// be decoded (whose it is is unknown), leaves every operation standing.
func (o *Options) operationStands(ctx context.Context, s *session) replacenode.Stands {
	var ids map[string]bool
	var failed error
	return func(id string) (bool, error) {
		if ids == nil && failed == nil {
			ids, failed = o.checkpointIDs(ctx, s)
		}
		if failed != nil {
			return true, failed
		}
		return ids[id], nil
	}
}

// checkpointIDs are the operation IDs the checkpoints of the namespace's clusters hold.
func (o *Options) checkpointIDs(ctx context.Context, s *session) (map[string]bool, error) {
	cls, err := s.adapter.List(ctx, s.cluster.Namespace)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, cl := range cls {
		v, ok := cl.Annotations[checkpoint.Annotation]
		if !ok {
			continue
		}
		cp, err := checkpoint.Decode(v, cl.UID, o.Kinds.Schemas())
		if err != nil {
			return nil, fmt.Errorf("the checkpoint of %s/%s cannot be read: %w", cl.Namespace, cl.Name, err)
		}
		ids[cp.OperationID] = true
	}
	return ids, nil
}
