package steps

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// TestStallGuard: a driven wait stops (exit 4, naming the cause) only once a cause was
// seen at every read for StallAfter; a read that sees none starts the count again; the
// causes are read at most ten times per StallAfter; an unreadable state is unknown,
// never "nothing in the way".
func TestStallGuard(t *testing.T) {
	ctx := context.Background()
	_, sw, n := setup(t, "4.1")
	sw.Scaler = readyScaler()
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	sw.Now = func() time.Time { return now }
	sw.StallAfter = 10 * time.Second
	running, reads := false, 0
	var listErr error
	sw.Operators = func(context.Context) ([]operator.Controller, error) {
		reads++
		return []operator.Controller{{Namespace: "ops", Name: "cass-operator", IsRunning: running}}, listErr
	}
	g := sw.guardStall("wait-leaving/"+n.Pod, n)
	at := func(d time.Duration, wantCause string, wantStop bool) {
		t.Helper()
		now = now.Add(d)
		cause, err := g.check(ctx)
		if !strings.Contains(cause, wantCause) || (wantCause == "" && cause != "") {
			t.Fatalf("after %s: cause %q, want %q", d, cause, wantCause)
		}
		var fatal *operation.Fatal
		if stopped := errors.As(err, &fatal); stopped != wantStop || (stopped && (fatal.Code != exit.Interrupted || !strings.Contains(err.Error(), "Deployment ops/cass-operator at 0 replicas"))) {
			t.Fatalf("after %s: %v, want stop %v", d, err, wantStop)
		}
	}
	at(0, "the operator is not running", false)
	at(5*time.Second, "not running", false)
	before := reads
	at(0, "not running", false) // not due: the last cause, no read
	if reads != before {
		t.Fatalf("read again within a tenth of StallAfter")
	}
	running = true
	at(time.Second, "", false) // gone: the count starts again
	running = false
	at(time.Second, "not running", false)
	at(9*time.Second, "not running", false)
	at(time.Second, "not running", true)

	listErr = errors.New("deployments is forbidden")
	if got := sw.explainStall(ctx, n); !strings.Contains(got, "cannot tell whether the operator runs (deployments is forbidden): unknown") {
		t.Fatalf("unreadable operator: %q", got)
	}
}

// TestStallGuardBesideTheWait: the guard's reads never hold up a wait woken by the
// operator's evidence: the change ends the check at once, the read under way is joined
// at the next one (and judged as of when it began).
func TestStallGuardBesideTheWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, sw, n := setup(t, "4.1")
	sw.Scaler, sw.Poll = readyScaler(), time.Hour
	fw := fakeWatches{res: watch.NewFake(), tasks: watch.NewFake()}
	sw.Watches = fw
	feed := NewEvidenceFeed(ctx, sw)
	if feed == nil {
		t.Fatal("no feed")
	}
	defer feed.Stop()
	reading, release := make(chan struct{}), make(chan struct{})
	sw.Operators = func(context.Context) ([]operator.Controller, error) {
		close(reading)
		<-release
		return []operator.Controller{{Namespace: "ops", Name: "cass-operator", IsRunning: false}}, nil
	}
	g := sw.guardStall("wait-leaving/"+n.Pod, n)
	since := sw.markEvidence()
	go func() {
		<-reading // the guard reads, and hangs there
		u := &unstructured.Unstructured{}
		u.SetName(sw.CP.Cluster)
		fw.res.Modify(u)
	}()
	if err := sw.waiting(ctx, g, "wait-leaving/"+n.Pod, "waiting", sw.Clock(), since, keyResource); err != nil {
		t.Fatalf("waiting: %v", err)
	}
	close(release)
	cause, err := g.check(ctx)
	if err != nil || !strings.Contains(cause, "the operator is not running") {
		t.Fatalf("the read under way was not joined: %q, %v", cause, err)
	}
}
