// Package events writes an operation's step transitions as Kubernetes Events on its
// cluster resource: the engine's reporting, for whoever runs kubectl describe next.
package events

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// DefaultBatch is how long step transitions wait to be written together.
const DefaultBatch = 5 * time.Second

// Reporter forwards progress to Inner and records each step's start, end and
// failure as Kubernetes Events on the cluster resource, so `kubectl describe` tells the
// story to whoever looks next.
//
// Transitions are batched: the first one starts a Batch-long window and every
// transition of that window goes into one Event (reason StepStarted/StepDone when it is
// alone, StepsProgressed with the transitions joined by " | " otherwise). A step that
// finishes within seconds of the next one starting would otherwise cost two Event
// writes per step, more than the steps' own requests. Failures and warnings are written
// at once (with whatever is pending before them); Flush writes the rest when the run
// ends. Events are best effort: a failure to record one is reported once and never
// stops the operation.
type Reporter struct {
	Inner  engine.Reporter
	Client kubernetes.Interface
	// Object is the cluster resource the events are about.
	Object corev1.ObjectReference
	Host   string
	Now    func() time.Time
	// Batch is the window (DefaultBatch when 0; negative writes every transition
	// alone, at once).
	Batch time.Duration

	once    sync.Once
	mu      sync.Mutex // guards pending and timer; held while writing, so Events keep their order
	pending []transition
	timer   *time.Timer
}

type transition struct{ reason, msg string }

// NewObjectReference builds the reference for a namespaced custom resource.
func NewObjectReference(apiVersion, kind, ns, name, uid string) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name, UID: types.UID(uid)}
}

func (r *Reporter) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// add queues a Normal transition, writing it at the end of the current window.
func (r *Reporter) add(reason, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = append(r.pending, transition{reason, msg})
	switch {
	case r.Batch < 0:
		r.flushLocked()
	case r.timer == nil:
		d := r.Batch
		if d == 0 {
			d = DefaultBatch
		}
		r.timer = time.AfterFunc(d, r.Flush)
	}
}

// Flush writes the pending transitions now (the run calls it when it ends).
func (r *Reporter) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushLocked()
}

func (r *Reporter) flushLocked() {
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	if len(r.pending) == 0 {
		return
	}
	reason, msg := r.pending[0].reason, r.pending[0].msg
	if len(r.pending) > 1 {
		parts := make([]string, len(r.pending))
		for i, t := range r.pending {
			parts[i] = t.reason + ": " + t.msg
		}
		reason, msg = "StepsProgressed", strings.Join(parts, " | ")
	}
	r.pending = nil
	r.write(corev1.EventTypeNormal, reason, msg)
}

func (r *Reporter) write(typ, reason, msg string) {
	now := r.now()
	ts := metav1.NewTime(now)
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x", r.Object.Name, now.UnixNano()),
			Namespace: r.Object.Namespace,
		},
		InvolvedObject:      r.Object,
		Reason:              reason,
		Message:             msg,
		Type:                typ,
		Source:              corev1.EventSource{Component: "kubectl-cassandra", Host: r.Host},
		FirstTimestamp:      ts,
		LastTimestamp:       ts,
		Count:               1,
		ReportingController: "kubectl-cassandra",
		ReportingInstance:   r.Host,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.Client.CoreV1().Events(r.Object.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		r.once.Do(func() {
			r.Inner.Warn("", "cannot record Events on the cluster resource (continuing without): "+err.Error())
		})
	}
}

// warning writes what is pending, then a Warning Event at once.
func (r *Reporter) warning(reason, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushLocked()
	r.write(corev1.EventTypeWarning, reason, msg)
}

// StepStarted implements engine.Reporter.
func (r *Reporter) StepStarted(id, desc string, attempt int) {
	r.Inner.StepStarted(id, desc, attempt)
	r.add("StepStarted", fmt.Sprintf("%s (attempt %d)", desc, attempt))
}

// StepDone implements engine.Reporter.
func (r *Reporter) StepDone(id, desc string, already bool) {
	r.Inner.StepDone(id, desc, already)
	if already {
		desc += " (found already done)"
	}
	r.add("StepDone", desc)
}

// StepFailed implements engine.Reporter.
func (r *Reporter) StepFailed(id, desc string, err error) {
	r.Inner.StepFailed(id, desc, err)
	r.warning("StepFailed", fmt.Sprintf("%s: %v", desc, err))
}

// Progress forwards streaming progress to Inner when it shows it (not recorded: too
// frequent; the checkpoint keeps the last one).
func (r *Reporter) Progress(id string, p record.Progress) {
	if pr, ok := r.Inner.(engine.ProgressReporter); ok {
		pr.Progress(id, p)
	}
}

// Waiting implements engine.Reporter (not recorded: too frequent).
func (r *Reporter) Waiting(id, what string, elapsed time.Duration) {
	r.Inner.Waiting(id, what, elapsed)
}

// Warn implements engine.Reporter.
func (r *Reporter) Warn(id, msg string) {
	r.Inner.Warn(id, msg)
	r.warning("Warning", msg)
}

// Info forwards a plain line to Inner when it prints one (not recorded: no transition).
func (r *Reporter) Info(msg string) {
	if i, ok := r.Inner.(interface{ Info(string) }); ok {
		i.Info(msg)
	}
}
