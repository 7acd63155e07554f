package events

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

type nopReporter struct {
	mu    sync.Mutex
	warns []string
}

func (*nopReporter) StepStarted(string, string, int)       {}
func (*nopReporter) StepDone(string, string, bool)         {}
func (*nopReporter) StepFailed(string, string, error)      {}
func (*nopReporter) Waiting(string, string, time.Duration) {}
func (n *nopReporter) Warn(_ string, msg string) {
	n.mu.Lock()
	n.warns = append(n.warns, msg)
	n.mu.Unlock()
}

// events lists the Events written so far, oldest first (names carry the time).
func events(t *testing.T, c *fake.Clientset) []corev1.Event {
	t.Helper()
	l, err := c.CoreV1().Events("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items
}

func newReporter(c *fake.Clientset, batch time.Duration) *Reporter {
	n := time.Unix(1700000000, 0)
	return &Reporter{
		Inner: &nopReporter{}, Client: c, Batch: batch,
		Object: NewObjectReference("db.orange.com/v2", "CassandraCluster", "ns", "demo", "uid-1"),
		// Distinct, increasing times: Event names are derived from them.
		Now: func() time.Time { n = n.Add(time.Millisecond); return n },
	}
}

func TestEventsBatchTransitionsOfOneWindow(t *testing.T) {
	c := fake.NewSimpleClientset()
	r := newReporter(c, time.Hour) // the window never closes by itself here
	r.StepStarted("a", "decommission p-1", 1)
	r.StepDone("a", "decommission p-1", false)
	r.StepDone("b", "verify p-1 left the ring", true)
	if got := events(t, c); len(got) != 0 {
		t.Fatalf("written before the window closed: %+v", got)
	}
	r.Flush()
	got := events(t, c)
	if len(got) != 1 {
		t.Fatalf("want one Event for the window, got %d", len(got))
	}
	want := "StepStarted: decommission p-1 (attempt 1) | StepDone: decommission p-1 | StepDone: verify p-1 left the ring (found already done)"
	if got[0].Reason != "StepsProgressed" || got[0].Message != want || got[0].Type != corev1.EventTypeNormal {
		t.Fatalf("got %s %q", got[0].Reason, got[0].Message)
	}
	if got[0].InvolvedObject.Kind != "CassandraCluster" || got[0].InvolvedObject.UID != "uid-1" {
		t.Fatalf("not about the cluster resource: %+v", got[0].InvolvedObject)
	}
	r.Flush() // nothing pending: nothing written
	if n := len(events(t, c)); n != 1 {
		t.Fatalf("an empty flush wrote an Event (%d in all)", n)
	}
}

func TestEventsAloneKeepTheirReason(t *testing.T) {
	c := fake.NewSimpleClientset()
	r := newReporter(c, time.Hour)
	r.StepStarted("a", "shrink StatefulSet s to 1 replicas", 2)
	r.Flush()
	got := events(t, c)
	if len(got) != 1 || got[0].Reason != "StepStarted" || got[0].Message != "shrink StatefulSet s to 1 replicas (attempt 2)" {
		t.Fatalf("got %+v", got)
	}
}

func TestEventsWindowClosesByItself(t *testing.T) {
	c := fake.NewSimpleClientset()
	r := newReporter(c, 20*time.Millisecond)
	r.StepStarted("a", "decommission p-1", 1)
	deadline := time.Now().Add(10 * time.Second)
	for len(events(t, c)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the window never closed: no Event written")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := events(t, c); got[0].Reason != "StepStarted" {
		t.Fatalf("got %+v", got[0])
	}
}

func TestEventsWarningsGoAtOnceAfterWhatIsPending(t *testing.T) {
	c := fake.NewSimpleClientset()
	r := newReporter(c, time.Hour)
	r.StepStarted("a", "decommission p-1", 1)
	r.StepFailed("a", "decommission p-1", context.DeadlineExceeded)
	got := events(t, c)
	if len(got) != 2 {
		t.Fatalf("want the pending start then the failure, got %d Events", len(got))
	}
	if got[0].Reason != "StepStarted" || got[1].Reason != "StepFailed" || got[1].Type != corev1.EventTypeWarning {
		t.Fatalf("order or types wrong: %s/%s then %s/%s", got[0].Reason, got[0].Type, got[1].Reason, got[1].Type)
	}
	r.Warn("a", "retrying")
	if got := events(t, c); len(got) != 3 || got[2].Reason != "Warning" {
		t.Fatalf("warning not written at once: %+v", got)
	}
}

func TestEventsUnbatched(t *testing.T) {
	c := fake.NewSimpleClientset()
	r := newReporter(c, -1)
	r.StepStarted("a", "x", 1)
	r.StepDone("a", "x", false)
	if got := events(t, c); len(got) != 2 || got[0].Reason != "StepStarted" || got[1].Reason != "StepDone" {
		t.Fatalf("got %+v", got)
	}
}
