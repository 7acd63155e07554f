package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/observation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// ThroughputKinds are the three step kinds, for the kinds' checkpoint schemas.
var ThroughputKinds = []string{record.StepRecordThroughput, record.StepSetThroughput, record.StepRestoreThroughput}

// throttler is the nodetool the throughput steps need besides Nodetool
// (nodetool.Client has it).
type throttler interface {
	Version(ctx context.Context, pod string) (nodetool.Version, error)
	ReadThroughput(ctx context.Context, pod string, v nodetool.Version, l nodetool.Limiter) (nodetool.Throughput, error)
	SetThroughput(ctx context.Context, pod string, v nodetool.Version, l nodetool.Limiter, t nodetool.Throughput) error
}

// throughputKind keeps a limiter's read until the run next waits (key: pod/limiter).
const throughputKind observation.Kind[nodetool.Throughput] = "throughput"

// throughputStep is what the three steps share: the step record and the pods it acts
// on (its own pod, or for a step without one the plan's Sources: the nodes that stream
// to a joining node).
type throughputStep struct {
	w    *World
	rec  record.Step
	pods []string
}

// newThroughputStep is the implementation of a throughput step record.
func newThroughputStep(w *World, s record.Step) (operation.Step, error) {
	if w.CP.Throughput == nil {
		return nil, fmt.Errorf("step %s: the checkpoint has no streamThroughput record", s.ID)
	}
	b := throughputStep{w: w, rec: s, pods: []string{s.Pod}}
	if s.Pod == "" {
		b.pods = w.CP.Throughput.Sources
	}
	switch s.Kind {
	case record.StepRecordThroughput:
		return &recordThroughput{b}, nil
	case record.StepSetThroughput:
		return &setThroughput{b}, nil
	case record.StepRestoreThroughput:
		return &restoreThroughput{b}, nil
	}
	return nil, fmt.Errorf("unknown step kind %q", s.Kind)
}

func (w *World) throttler() (throttler, error) {
	t, ok := w.Nodetool.(throttler)
	if !ok {
		return nil, errors.New("this nodetool client cannot read or set the stream throughput")
	}
	return t, nil
}

// target is the rate the operation sets.
func (s throughputStep) target() nodetool.Throughput { return RateThroughput(s.w.CP.Throughput.Rate) }

// who names the pods in messages: the pod, or "the N nodes that stream to the new ones".
func (s throughputStep) who() string {
	if s.rec.Pod != "" {
		return s.rec.Pod
	}
	return fmt.Sprintf("the %d nodes that stream to %s (%s)", len(s.pods), receivers(s.w.CP), strings.Join(s.pods, ", "))
}

// receivers names who the sources of a plan stream to: a replace's replacement, a
// scale-up's new nodes.
func receivers(cp *record.Checkpoint) string {
	if cp.Replace != nil {
		return "the replacement"
	}
	return "the new ones"
}

// record is pod's record, with its version parsed.
func (s throughputStep) record(pod string) (record.RecordedThroughput, nodetool.Version, bool, error) {
	r, ok := s.w.CP.Throughput.RecordOf(pod)
	if !ok {
		return r, nodetool.Version{}, false, nil
	}
	v, err := nodetool.ParseVersion(r.Version)
	if err != nil {
		return r, v, true, fmt.Errorf("the checkpoint's record of %s: %w", pod, err)
	}
	return r, v, true, nil
}

// limits reads the limiters of pod that its record names (kept until the run waits).
func (s throughputStep) limits(ctx context.Context, pod string, v nodetool.Version, ls []nodetool.Limiter) (map[nodetool.Limiter]nodetool.Throughput, error) {
	t, err := s.w.throttler()
	if err != nil {
		return nil, err
	}
	out := map[nodetool.Limiter]nodetool.Throughput{}
	for _, l := range ls {
		got, err := observation.Get(ctx, &s.w.obs, throughputKind, pod+"/"+string(l), func(ctx context.Context) (nodetool.Throughput, error) {
			return t.ReadThroughput(ctx, pod, v, l)
		})
		if err != nil {
			return nil, err
		}
		out[l] = got
	}
	return out, nil
}

// gone says why pod has nothing left to set or restore ("" when it has): its pod is
// gone, its node left the ring (DECOMMISSIONED: it streams no more, and its JVM goes
// with its pod), or its JVM is down (jvmGone): a limit lives in the JVM only, so one set
// in a JVM that is gone went with it. Any other failed read is an error (unknown), never
// gone.
func (s throughputStep) gone(ctx context.Context, pod string) (string, error) {
	ns, nerr := s.w.netstats(ctx, pod)
	if nerr == nil {
		if ns.Mode == pubnodetool.ModeDecommissioned {
			return "node " + pod + " has left the ring (DECOMMISSIONED)", nil
		}
		return "", nil
	}
	p, err := s.w.getPod(ctx, pod)
	switch {
	case err != nil:
		return "", err
	case p == nil:
		return "pod " + pod + " is gone", nil
	}
	if why := jvmGone(pod, p, s.w.Container, nerr); why != "" {
		return why, nil
	}
	return "", nerr
}

// jvmGone says why pod p's Cassandra JVM is not there ("" when it may be): its
// container is not running, or nodetool's JMX connection is refused (nothing listens
// on the port: the JVM exited, or a new one has not opened it yet, and either way the
// limits set in the old one are gone). A connection failing any other way (a timeout,
// an exec error) is unknown: the JVM may still run with the limit set.
func jvmGone(pod string, p *corev1.Pod, container string, ntErr error) string {
	if !ContainerRunning(p, container) {
		return "the Cassandra container of pod " + pod + " is not running (the limits set in its JVM went with it)"
	}
	var unreachable *pubnodetool.UnreachableError
	if errors.As(ntErr, &unreachable) && strings.Contains(unreachable.Message, "Connection refused") {
		return "the JMX connection to " + pod + " is refused (" + unreachable.Message + "): its JVM is down, and the limits set in it went with it"
	}
	return ""
}

// recordedLimiters are the limiters r holds, in the order nodetool.Limiters gives.
func recordedLimiters(r record.RecordedThroughput) []nodetool.Limiter {
	var out []nodetool.Limiter
	for _, l := range []nodetool.Limiter{nodetool.LimiterStream, nodetool.LimiterEntireSSTable, nodetool.LimiterInterDC, nodetool.LimiterEntireSSTableInterDC} {
		if _, ok := r.Limiters[string(l)]; ok {
			out = append(out, l)
		}
	}
	return out
}

// stepState is the recorded state of the step of kind about pod ("" for the step
// without one), "" when the plan has none.
func (w *World) stepState(kind, pod string) string {
	st, ok := w.CP.Step(record.StepID(kind, pod))
	if !ok {
		return ""
	}
	return st.State
}

// informer is a reporter that prints a plain line (output.Progress): what is worth
// saying and is no warning.
type informer interface{ Info(msg string) }

// inform says msg once per run (key), as a plain line where the reporter has one.
func (w *World) inform(key, id, msg string) {
	if _, had := w.said.set(key, true); had || w.Reporter == nil {
		return
	}
	if i, ok := w.Reporter.(informer); ok {
		i.Info(msg)
		return
	}
	w.Reporter.Waiting(id, msg, 0)
}

// warnOnce warns msg once per run (key).
func (w *World) warnOnce(key, id, msg string) {
	if _, had := w.said.set(key, true); had || w.Reporter == nil {
		return
	}
	w.Reporter.Warn(id, msg)
}

// RecordRate is t as the checkpoint keeps it.
func RecordRate(t nodetool.Throughput) record.Rate {
	return record.Rate{Unlimited: t.Unlimited, Value: t.Value, Unit: string(t.Unit)}
}

// RateThroughput is a checkpoint's rate as nodetool takes it.
func RateThroughput(r record.Rate) nodetool.Throughput {
	return nodetool.Throughput{Unlimited: r.Unlimited, Value: r.Value, Unit: nodetool.RateUnit(r.Unit)}
}

// restartedRedo is the step a node found NORMAL again under its decommission (it
// restarted) goes back to: its set of the stream throughput when the plan has one (the
// restart brought its cassandra.yaml value back), else decomm.
func (w *World) restartedRedo(pod, decomm string) string {
	id := record.StepID(record.StepSetThroughput, pod)
	if _, ok := w.CP.Step(id); ok {
		return id
	}
	return decomm
}
