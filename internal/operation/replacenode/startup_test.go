package replacenode

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestStartFailureReportsCassandrasWords: a replacement whose JVM exited 3 is reported
// with Cassandra's own startup line (§4.2), its rule, what state things are in and how
// to go on; any other exit is not a startup failure.
func TestStartFailureReportsCassandrasWords(t *testing.T) {
	const line = "Exception (java.lang.RuntimeException) encountered during startup: Replacing a node without bootstrapping risks invalidating consistency guarantees as the expected data may not be present until repair is run. To perform this operation, please restart with -Dcassandra.allow_unsafe_replace=true"
	pod := func(code int32, msg string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p2", Namespace: "ns"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: "cassandra", LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg}},
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}}
	}
	cp := &record.Checkpoint{OperationID: "replace-1", Namespace: "ns", Cluster: "demo"}
	s := &waitReplaced{run: &run{w: &steps.World{Kube: fake.NewClientset(), CP: cp, Container: "cassandra"}, rep: &record.Replacement{Pod: "p2", HostID: "dead"}}}
	err := s.startFailure(context.Background(), pod(3, "INFO  starting\n"+line+"\n"))
	var fatal *operation.Fatal
	if !errors.As(err, &fatal) {
		t.Fatalf("exit 3 with a startup error: %v, want a Fatal error", err)
	}
	for _, want := range []string{"does not start", "Replacing a node without bootstrapping", "would-not-bootstrap", "seed list", "claims and pod were deleted", "resume"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the report does not say %q: %v", want, err)
		}
	}
	running := pod(3, line)
	running.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	if err := s.startFailure(context.Background(), running); err != nil {
		t.Errorf("a start that failed once and runs now is no failure: %v", err)
	}
	const r7 = "Exception (java.lang.UnsupportedOperationException) encountered during startup: Other bootstrapping/leaving/moving nodes detected, cannot bootstrap while cassandra.consistent.rangemovement is true. Nodes detected, bootstrapping: ; leaving: /10.244.0.11:7000; moving: ;"
	if err := s.startFailure(context.Background(), pod(3, r7)); err != nil {
		t.Errorf("a start refused while the ring changes (R7) is retried by the kubelet and waited for: %v", err)
	}
	if err := s.startFailure(context.Background(), pod(137, line)); err != nil {
		t.Errorf("exit 137 (killed) is no startup failure: %v", err)
	}
	if err := s.startFailure(context.Background(), pod(3, "no startup line")); err != nil {
		t.Errorf("exit 3 without Cassandra's line (and no readable log) is not reported as one: %v", err)
	}
}
