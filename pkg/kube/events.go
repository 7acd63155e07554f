package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// reporter is the progress interface the engine uses (engine.Reporter).
type reporter interface {
	StepStarted(id, desc string, attempt int)
	StepDone(id, desc string, already bool)
	StepFailed(id, desc string, err error)
	Waiting(id, what string, elapsed time.Duration)
	Warn(id, msg string)
}

// EventReporter forwards progress to Inner and records each step's start, end and
// failure as a Kubernetes Event on the cluster resource, so `kubectl describe` tells
// the story to whoever looks next. Events are best effort: a failure to record one is
// reported once and never stops the operation.
type EventReporter struct {
	Inner  reporter
	Client kubernetes.Interface
	// Object is the cluster resource the events are about.
	Object corev1.ObjectReference
	Host   string
	Now    func() time.Time

	once sync.Once
}

// NewObjectReference builds the reference for a namespaced custom resource.
func NewObjectReference(apiVersion, kind, ns, name, uid string) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name, UID: types.UID(uid)}
}

func (r *EventReporter) emit(typ, reason, msg string) {
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
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

// StepStarted implements engine.Reporter.
func (r *EventReporter) StepStarted(id, desc string, attempt int) {
	r.Inner.StepStarted(id, desc, attempt)
	r.emit(corev1.EventTypeNormal, "StepStarted", fmt.Sprintf("%s (attempt %d)", desc, attempt))
}

// StepDone implements engine.Reporter.
func (r *EventReporter) StepDone(id, desc string, already bool) {
	r.Inner.StepDone(id, desc, already)
	if already {
		desc += " (found already done)"
	}
	r.emit(corev1.EventTypeNormal, "StepDone", desc)
}

// StepFailed implements engine.Reporter.
func (r *EventReporter) StepFailed(id, desc string, err error) {
	r.Inner.StepFailed(id, desc, err)
	r.emit(corev1.EventTypeWarning, "StepFailed", fmt.Sprintf("%s: %v", desc, err))
}

// Waiting implements engine.Reporter (not recorded: too frequent).
func (r *EventReporter) Waiting(id, what string, elapsed time.Duration) {
	r.Inner.Waiting(id, what, elapsed)
}

// Warn implements engine.Reporter.
func (r *EventReporter) Warn(id, msg string) {
	r.Inner.Warn(id, msg)
	r.emit(corev1.EventTypeWarning, "Warning", msg)
}
