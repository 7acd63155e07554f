package steps

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// A driven operation is done once the operator that carried it out agrees: its own
// status settled (operator.Settler; cass-operator: progress Ready, no scaling
// condition, every pod labelled Started). The plugin's own checks (each pod back, each
// node UN, the task finished) can all hold while the operator still labels its pods,
// and a runbook's next command would meet it busy (and be refused, or wait).

// settleID names the wait in the run's reports (no checkpoint step: a run that dies in
// it is resumed with every step done, and waits again).
const settleID = "wait-operator-settled"

// AwaitSettled waits until the operator says it is done with the operation's
// datacenter, reading again when its resource or a pod changes (awaitEvidence). Nothing
// to wait for when the operator does not act or says nothing of it (Settler).
func AwaitSettled(ctx context.Context, w *World) error {
	if w.Scaler == nil || w.Settler == nil || w.CP == nil {
		return nil
	}
	start := w.Clock()
	what := "state unknown"
	// What keeps the operator from settling (it does not run, a pod is not Ready) stops
	// the wait once it lasted StallAfter, as in the driven waits (drivenstall.go).
	guard := w.guardStall(settleID, record.Node{})
	// pods is the last pod list read, listedAt the feed's mark before that read.
	var pods *corev1.PodList
	var listedAt uint64
	for {
		since := w.markEvidence()
		kept := keptPods(pods, w.evidence().unchangedSince(listedAt, keyPods))
		why, read, err := w.Settler.Unsettled(ctx, w.CP.Namespace, w.CP.Cluster, w.CP.Target.DC, kept)
		if err == nil && kept == nil {
			pods, listedAt = read, since
		}
		switch {
		case err == nil && why == "":
			return nil
		case ctx.Err() != nil:
			if timedOut(ctx) {
				what += "; read now: " + w.explainStall(ctx, record.Node{})
			}
			return fmt.Errorf("every step is done, but the operator has not settled datacenter %s: %s. Nothing more is asked of it; once it settled: kubectl cassandra resume -n %s %s (it ends the operation)",
				w.CP.Target.DC, what, w.CP.Namespace, w.CP.Cluster)
		case err != nil:
			what = "cannot read the operator's status (" + err.Error() + "): unknown"
		default:
			what = "the operator is not done yet: " + why
		}
		if err := w.waiting(ctx, guard, settleID, what, start, since, keyResource, keyPods); err != nil {
			return err
		}
		if err := w.awaitEvidence(ctx, since, w.poll(), w.unknownDue(what, guard.due()), keyResource, keyPods); err != nil && ctx.Err() == nil {
			return err
		}
	}
}

// keptPods is the pod list a settle round may judge again instead of listing the pods
// anew: the last one read, while the pods' watch saw no change since that read began
// (unchanged). The operator's last step before it settles is a status write, not a pod
// change, so the round that sees it settled reads only the resource (a GET), not a
// LIST that waits for the API server's watch cache. nil: list again.
func keptPods(last *corev1.PodList, unchanged bool) *corev1.PodList {
	if !unchanged {
		return nil
	}
	return last
}
