package lifecycle

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// pauseJudge judges the operations holding an operator paused from the world, through
// the operator's adapter (steps.PauseJudge): a holder stands while its cluster carries
// its operation's checkpoint. The paused-by record is a claim; the checkpoint is the
// proof.
type pauseJudge struct {
	a     operator.Adapter
	kube  kubernetes.Interface
	kinds checkpoint.Schemas
}

// pauseJudge judges the holders of an operator's pause through this lifecycle's adapter.
func (l *Lifecycle) pauseJudge() pauseJudge {
	return pauseJudge{a: l.Adapter, kube: l.Kube, kinds: l.Kinds.Schemas()}
}

// JudgeHolder implements steps.PauseJudge. Whatever cannot be read or decoded leaves
// the holder standing (unknown is never "gone").
func (j pauseJudge) JudgeHolder(ctx context.Context, h record.PauseHolder) (steps.HolderVerdict, string, error) {
	cl, _, err := j.a.Get(ctx, h.Namespace, h.Cluster)
	if apierrors.IsNotFound(err) {
		return steps.HolderStale, fmt.Sprintf("%s %s/%s is gone", j.a.Kind(), h.Namespace, h.Cluster), nil
	}
	if err != nil {
		return steps.HolderLive, "", err
	}
	why, stands, err := holderRecord(cl, j.kinds, h.OperationID)
	if err != nil || stands {
		return steps.HolderLive, "", err
	}
	if cl.Deleting {
		return steps.HolderStale, why + "; the cluster is being deleted, and the operator must run to finish that", nil
	}
	differ, err := unsettledRacks(ctx, j.kube, cl)
	if err != nil {
		return steps.HolderLive, "", err
	}
	if len(differ) > 0 {
		return steps.HolderStaleUnsettled, why + "; its racks differ from the cluster resource (" + strings.Join(differ, ", ") + ")", nil
	}
	return steps.HolderStale, why, nil
}

// holderRecord says whether cl's checkpoint is operation id (stands), and if not, why
// in words. A checkpoint that cannot be decoded is an error: whose it is is unknown.
func holderRecord(cl topology.Cluster, kinds checkpoint.Schemas, id string) (why string, stands bool, err error) {
	v, ok := cl.Annotations[checkpoint.Annotation]
	if !ok {
		return fmt.Sprintf("the checkpoint of operation %s is gone from %s/%s", id, cl.Namespace, cl.Name), false, nil
	}
	cp, err := checkpoint.Decode(v, cl.UID, kinds)
	if err != nil {
		return "", false, err
	}
	if cp.OperationID == id {
		return "", true, nil
	}
	return fmt.Sprintf("operation %s is no longer on %s/%s (operation %s is)", id, cl.Namespace, cl.Name, cp.OperationID), false, nil
}

// unsettledRacks lists the racks of cl whose StatefulSet replicas differ from the count
// the cluster resource asks (a running operator would change them).
func unsettledRacks(ctx context.Context, kube kubernetes.Interface, cl topology.Cluster) ([]string, error) {
	var differ []string
	for _, dc := range cl.DCs {
		for _, r := range dc.Racks {
			sts, err := kube.AppsV1().StatefulSets(cl.Namespace).Get(ctx, r.StatefulSet, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue // the operator creates it: nothing of ours to protect
			}
			if err != nil {
				return nil, fmt.Errorf("cannot read StatefulSet %s/%s: %w", cl.Namespace, r.StatefulSet, err)
			}
			n := 1
			if sts.Spec.Replicas != nil {
				n = int(*sts.Spec.Replicas)
			}
			if n != r.Nodes {
				differ = append(differ, fmt.Sprintf("rack %s asks %d, StatefulSet %s has %d", r.Name, r.Nodes, r.StatefulSet, n))
			}
		}
	}
	return differ, nil
}
