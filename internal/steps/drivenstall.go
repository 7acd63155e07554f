package steps

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// A driven wait (the operator acts, the plugin watches) that does not end has causes
// the plugin can read: the operator not running or not ready, the datacenter stopped or
// invalid, another pod of the datacenter not Ready (its node down). The waits read them
// cheaply while they wait (stallGuard: API reads, no exec), stop with exit 4 naming
// them once they lasted StallAfter (nothing more can happen until someone fixes them),
// and when they give up (--timeout) say what they read then, the ring included. What
// cannot be read is said to be unknown, never taken for "nothing in the way".

// explainRead bounds the reads that explain a wait that timed out (its own context is
// over by then).
const explainRead = 20 * time.Second

// operatorDown says why the operator cannot act now ("" when one of its controllers
// runs and is ready); a failed read is unknown.
func (w *World) operatorDown(ctx context.Context) string {
	if w.Operators == nil {
		return ""
	}
	ops, err := w.Operators(ctx)
	if err != nil {
		return "cannot tell whether the operator runs (" + err.Error() + "): unknown"
	}
	var seen []string
	for _, op := range ops {
		switch {
		case !op.Running():
			seen = append(seen, fmt.Sprintf("Deployment %s at %d replicas", op, op.Replicas))
		case op.NotReady:
			seen = append(seen, fmt.Sprintf("Deployment %s at %d replicas, none ready", op, op.Replicas))
		default:
			return ""
		}
	}
	if len(seen) == 0 {
		return fmt.Sprintf("the operator is not running (it is the one that scales this datacenter): no Deployment of it manages namespace %s", w.Namespace)
	}
	return "the operator is not running (it is the one that scales this datacenter): " + strings.Join(seen, ", ")
}

// stallCause reads what keeps the operator from going on with pod, with API reads only:
// the operator's Deployments, the datacenter's progress, its pods ("" when nothing is
// in the way).
func (w *World) stallCause(ctx context.Context, pod string) string {
	var causes []string
	if down := w.operatorDown(ctx); down != "" {
		causes = append(causes, down)
	}
	switch p, err := w.progress(ctx, ""); {
	case err != nil:
		causes = append(causes, "cannot read the operator's progress ("+err.Error()+"): unknown")
	case p.Stopped:
		causes = append(causes, fmt.Sprintf("datacenter %s is stopped (spec.stopped): the operator acts on no node of it", w.CP.Target.DC))
	case p.Blocked != "":
		causes = append(causes, "the operator says it cannot go on: "+p.Blocked)
	}
	bad, err := w.unreadyPods(ctx, pod)
	if err != nil {
		causes = append(causes, "cannot list the datacenter's pods ("+err.Error()+"): unknown")
	}
	causes = append(causes, bad...)
	return strings.Join(causes, "; ")
}

// unreadyPods lists the pods of the target datacenter's racks, but pod, that are not
// Running and Ready, with their state: the operator starts, stops and removes one node
// at a time, and waits while another is not ready (a node down).
func (w *World) unreadyPods(ctx context.Context, pod string) ([]string, error) {
	l, err := w.Kube.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.ClusterSelector})
	if err != nil {
		return nil, err
	}
	var out []string
	for i := range l.Items {
		p := &l.Items[i]
		if p.Name == pod || !w.inRacks(p.Name) {
			continue
		}
		if st := PodState(p); st != "" {
			out = append(out, "pod "+p.Name+": "+st)
		}
	}
	sort.Strings(out)
	return out, nil
}

// inRacks reports whether pod belongs to a StatefulSet of the target datacenter.
func (w *World) inRacks(pod string) bool {
	for _, r := range w.Racks {
		if r.StatefulSet != "" && strings.HasPrefix(pod, r.StatefulSet+"-") {
			return true
		}
	}
	return false
}

// ringWords reads the ring now, from a Ready pod other than n's, and says which nodes
// are not as they should be (n's own left out), or that it cannot be read: unknown.
func (w *World) ringWords(ctx context.Context, n record.Node) string {
	r, reader, err := w.ringExcept(ctx, n.Pod)
	if err != nil {
		return "the ring cannot be read (" + err.Error() + "): its state is unknown"
	}
	if bad := w.ringProblems(r, n.DC, n.HostID); len(bad) > 0 {
		return strings.Join(bad, "; ") + " (ring read from " + reader + ")"
	}
	return fmt.Sprintf("every other node of datacenter %s is UN (ring read from %s)", n.DC, reader)
}

// stateWords says where the operator stands with n: the size asked, what it is doing,
// its mark on n's pod.
func (w *World) stateWords(ctx context.Context, n record.Node) string {
	p, err := w.progress(ctx, n.Pod)
	if err != nil {
		return "the operator's progress cannot be read (" + err.Error() + "): unknown"
	}
	doing := "busy (its progress is not Ready)"
	switch {
	case p.ScalingDown:
		doing = "scaling down"
	case p.ScalingUp:
		doing = "scaling up"
	case p.Ready:
		doing = "settled (progress Ready)"
	}
	s := fmt.Sprintf("the datacenter's %s is %d and the operator is %s", w.countWords(), p.Size, doing)
	if p.PodState != "" {
		s += fmt.Sprintf("; it marks pod %s %s", n.Pod, p.PodState)
	}
	return s
}

// drivenNext is what to do after a driven wait stopped: the operator goes on by itself
// once the cause is gone, the plugin only watches.
func (w *World) drivenNext() string {
	return fmt.Sprintf("Nothing more was asked of the operator; it goes on by itself once the cause is fixed. Then: kubectl cassandra resume -n %s %s (or, to end the operation where the world stands: kubectl cassandra abort -n %s %s)",
		w.CP.Namespace, w.CP.Cluster, w.CP.Namespace, w.CP.Cluster)
}

// explainStall is what a driven wait for n says when it gives up: what it read now that
// explains the stall (or that nothing did), the ring, and the operator's state.
func (w *World) explainStall(ctx context.Context, n record.Node) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), explainRead)
	defer cancel()
	cause := w.stallCause(ctx, n.Pod)
	if cause == "" {
		cause = "no cause read: the operator runs and every other pod of the datacenter is Ready"
	}
	return cause + "; " + w.ringWords(ctx, n) + "; " + w.stateWords(ctx, n)
}

// timedOut reports whether ctx ended by its deadline (the step's --timeout), not an
// interruption: only then is the stall explained (reads cost time).
func timedOut(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// stallGuard watches one driven wait for a cause that keeps it from ending.
type stallGuard struct {
	w  *World
	id string
	n  record.Node
	// next is when the causes are read again; since is when the unbroken run of reads
	// that each saw a cause began (zero: the last read saw none); cause the last seen.
	next, since time.Time
	cause       string
	// pending is a read of the causes under way beside the wait (waiting), begun at
	// pendingAt; nil when none.
	pending   chan string
	pendingAt time.Time
}

// guardStall starts watching the wait id for node n.
func (w *World) guardStall(id string, n record.Node) *stallGuard {
	return &stallGuard{w: w, id: id, n: n}
}

// stallAfter is how long a cause must last before the wait stops.
func (g *stallGuard) stallAfter() time.Duration {
	if g.w.StallAfter > 0 {
		return g.w.StallAfter
	}
	return defaultStallAfter
}

// check reads the causes when due (ten times per StallAfter, at most once per poll:
// cheap API reads) and returns the last one seen ("" none). Once every read for
// StallAfter saw one, it returns the error that stops the wait (exit 4): nothing ends
// it until someone fixes that, and resume waits again.
func (g *stallGuard) check(ctx context.Context) (string, error) {
	cause, _, err := g.checkBeside(ctx, nil)
	return cause, err
}

// checkBeside is check for a wait that reads again as soon as what it waits for
// changes (changed: whether it did since the wait's round, and the channel closed at
// the next change; nil: no such wait): the causes are read beside it, and a change seen
// first ends the check at once (woken) with the last cause, the read joined at the
// next check. The operator's evidence is never held up by the guard's own reads.
func (g *stallGuard) checkBeside(ctx context.Context, changed func() (bool, <-chan struct{})) (cause string, woken bool, err error) {
	if g == nil || ctx.Err() != nil {
		return "", false, nil
	}
	if g.pending == nil {
		now := g.w.Clock()
		if now.Before(g.next) {
			return g.cause, false, nil
		}
		g.next = now.Add(max(g.w.poll(), g.stallAfter()/10))
		ch := make(chan string, 1)
		go func() { ch <- g.w.stallCause(ctx, g.n.Pod) }()
		g.pending, g.pendingAt = ch, now
	}
	for {
		var wake <-chan struct{}
		if changed != nil {
			var ok bool
			if ok, wake = changed(); ok {
				return g.cause, true, nil
			}
		}
		select {
		case c := <-g.pending:
			g.pending = nil
			cause, err := g.judge(ctx, g.pendingAt, c)
			return cause, false, err
		case <-wake:
		case <-ctx.Done():
			return g.cause, false, nil
		}
	}
}

// judge records the causes read at now and says whether they lasted StallAfter.
func (g *stallGuard) judge(ctx context.Context, now time.Time, cause string) (string, error) {
	g.cause = cause
	switch {
	case g.cause == "" || ctx.Err() != nil:
		g.since = time.Time{}
	case g.since.IsZero():
		g.since = now
	case now.Sub(g.since) >= g.stallAfter():
		return g.cause, &operation.Fatal{Code: exit.Interrupted, Err: fmt.Errorf("stopped waiting for %s after %s: %s; %s; %s. %s",
			g.id, roundWait(now.Sub(g.since)), g.cause, g.w.ringWords(ctx, g.n), g.w.stateWords(ctx, g.n), g.w.drivenNext())}
	}
	return g.cause, nil
}

// waiting checks the guard g (nil: none) beside the wait id, whose round of reads
// began at since and which reads again when one of keys changes, and shows what it
// waits for, with the guard's cause when it sees one; the guard's error stops the
// wait (check).
func (w *World) waiting(ctx context.Context, g *stallGuard, id, what string, start time.Time, since uint64, keys ...string) error {
	var changed func() (bool, <-chan struct{})
	if f := w.evidence(); f != nil {
		changed = func() (bool, <-chan struct{}) {
			ok, wake, whole := f.changedSince(since, keys)
			if !whole {
				return false, nil // a watch is not open: the wait polls, the read is awaited
			}
			return ok, wake
		}
	}
	cause, _, err := g.checkBeside(ctx, changed)
	if err != nil {
		return err
	}
	if cause != "" {
		what += " (" + cause + ")"
	}
	w.Reporter.Waiting(id, what, w.Clock().Sub(start))
	return nil
}

// due is how long until the guard reads the causes again (0: no guard, or due now):
// a wait on the evidence feed reads no later than that.
func (g *stallGuard) due() time.Duration {
	if g == nil || g.next.IsZero() {
		return 0
	}
	return max(g.next.Sub(g.w.Clock()), time.Nanosecond)
}
