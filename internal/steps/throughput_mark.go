package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// A stream limit lives in a node's JVM, and the checkpoint's record of what it replaced
// goes with the checkpoint: a record wiped, or an operation ended without its restore,
// would leave the limit for good. So the limit carries its owner on the node's pod
// (the principle "every mark carries its owner"): before set changes a node, the pod is
// annotated with the operation's ID, the rate and the values it replaces; restore
// removes it. A later command reaps the marks of operations that are gone
// (ReapThroughputMarks), and a new plan reads a mark before it records what a node had.

// ThroughputMarkAnnotation is the pod annotation naming the operation whose stream limit
// the node runs with.
const ThroughputMarkAnnotation = "kubectl-cassandra.io/stream-throughput"

// ThroughputMark is the annotation's value.
type ThroughputMark struct {
	OperationID string `json:"operationID"`
	Version     string `json:"version"`
	// Rate is what the operation sets; Had what each limiter read before it.
	Rate record.Rate            `json:"rate"`
	Had  map[string]record.Rate `json:"had"`
}

// markOf is p's mark (ok false: none, or one that does not parse, which is said).
func markOf(p *corev1.Pod) (ThroughputMark, bool, error) {
	v, ok := p.Annotations[ThroughputMarkAnnotation]
	if !ok {
		return ThroughputMark{}, false, nil
	}
	var m ThroughputMark
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return m, false, fmt.Errorf("pod %s's annotation %s does not parse: %w", p.Name, ThroughputMarkAnnotation, err)
	}
	return m, true, nil
}

// writeMark sets (m not nil) or removes (nil) pod's mark with a merge patch; a pod gone
// has nothing to mark. The pod's kept read is dropped: it changed.
func (w *World) writeMark(ctx context.Context, pod string, m *ThroughputMark) error {
	var value any // nil removes the key
	if m != nil {
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		value = string(b)
	}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{ThroughputMarkAnnotation: value}}})
	w.dropPod(pod)
	_, err := w.Kube.CoreV1().Pods(w.Namespace).Patch(ctx, pod, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "kubectl-cassandra"})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot write annotation %s on pod %s: %w", ThroughputMarkAnnotation, pod, err)
	}
	return nil
}

// markPod writes this operation's mark on pod before its limit is set (none if it has
// it already; a pod gone needs none).
func (s throughputStep) markPod(ctx context.Context, pod string, r record.RecordedThroughput) error {
	p, err := s.w.getPod(ctx, pod)
	if err != nil || p == nil {
		return err
	}
	if m, ok, _ := markOf(p); ok && m.OperationID == s.w.CP.OperationID {
		return nil
	}
	return s.w.writeMark(ctx, pod, &ThroughputMark{OperationID: s.w.CP.OperationID, Version: r.Version, Rate: s.w.CP.Throughput.Rate, Had: r.Limiters})
}

// ownMark: pod (when it exists) still carries this operation's mark.
func (s throughputStep) ownMark(ctx context.Context, pod string) (bool, error) {
	p, err := s.w.getPod(ctx, pod)
	if err != nil || p == nil {
		return false, err
	}
	m, ok, _ := markOf(p)
	return ok && m.OperationID == s.w.CP.OperationID, nil
}

// hadFromMark is what a new record takes for limiter l that reads now: a mark left on
// the pod by an operation (gone, or this one planned again) whose rate the limiter still
// reads means the node had the mark's value before that operation set it.
func hadFromMark(m ThroughputMark, ok bool, l nodetool.Limiter, now nodetool.Throughput, v nodetool.Version) nodetool.Throughput {
	had, recorded := m.Had[string(l)]
	if !ok || !recorded || !sameRate(now, RateThroughput(m.Rate), v) {
		return now
	}
	return RateThroughput(had)
}

// ReapThroughputMarks puts back the stream limits that operations which are gone left
// on the cluster's nodes: a pod whose mark names an operation other than keep (the
// operation in flight, "" when none) has each limiter still at the mark's rate set back
// to what the mark says it had, then the mark removed. A node whose JVM is down has
// nothing left to put back (the mark goes). It returns what it did, one line each; a
// node it cannot read keeps its mark (the next command tries again) and is an error.
func ReapThroughputMarks(ctx context.Context, w *World, keep string) ([]string, error) {
	pods, err := w.Kube.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.ClusterSelector})
	if err != nil {
		return nil, fmt.Errorf("cannot list the cluster's pods: %w", err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	t, terr := w.throttler()
	var done []string
	var errs []error
	for i := range pods.Items {
		p := &pods.Items[i]
		m, ok, err := markOf(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok || m.OperationID == keep {
			continue
		}
		if terr != nil {
			return done, terr
		}
		line, err := reapMark(ctx, w, t, p, m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, line)
	}
	if len(errs) > 0 {
		return done, fmt.Errorf("%v", errs)
	}
	return done, nil
}

// reapMark puts back one pod's limits its gone operation left, and removes its mark.
func reapMark(ctx context.Context, w *World, t throttler, p *corev1.Pod, m ThroughputMark) (string, error) {
	v, err := nodetool.ParseVersion(m.Version)
	if err != nil {
		return "", fmt.Errorf("pod %s's mark of operation %s: %w", p.Name, m.OperationID, err)
	}
	var back []string
	limiters := make([]string, 0, len(m.Had))
	for l := range m.Had {
		limiters = append(limiters, l)
	}
	sort.Strings(limiters)
	for _, name := range limiters {
		l := nodetool.Limiter(name)
		now, err := t.ReadThroughput(ctx, p.Name, v, l)
		if err != nil {
			if why := jvmGone(p.Name, p, w.Container, err); why != "" {
				back = nil
				break // nothing left to put back
			}
			return "", fmt.Errorf("cannot read the stream throughput of %s, which operation %s (gone) set: %w; the next command tries again", p.Name, m.OperationID, err)
		}
		if !sameRate(now, RateThroughput(m.Rate), v) {
			continue // restarted, or changed by someone since: left as it is
		}
		had := RateThroughput(m.Had[name])
		if err := t.SetThroughput(ctx, p.Name, v, l, had); err != nil {
			return "", fmt.Errorf("cannot put back the %s limiter of %s (operation %s, gone, set it to %s): %w; the next command tries again", l, p.Name, m.OperationID, RateThroughput(m.Rate), err)
		}
		back = append(back, fmt.Sprintf("%s %s", l, had))
	}
	if err := w.writeMark(ctx, p.Name, nil); err != nil {
		return "", err
	}
	if len(back) == 0 {
		return fmt.Sprintf("pod %s: the stream limit of operation %s (gone) is no longer set; its mark removed", p.Name, m.OperationID), nil
	}
	return fmt.Sprintf("pod %s: put back the stream throughput operation %s (gone) had set to %s: %v; its mark removed", p.Name, m.OperationID, RateThroughput(m.Rate), back), nil
}
