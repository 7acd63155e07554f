package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// TestAPIFaults fails every API request of a scale-down in turn (reads, writes, access
// reviews; exec is not an API client request here) with 409, 429 with Retry-After, 500,
// 503, a server timeout or a network timeout. Each run must either finish, or stop
// cleanly (exit 1 before anything changed, or exit 4 with the checkpoint saved); then a
// resume (or the same scale) must converge, with one decommission per node and no PVC
// of a live pod deleted.
func TestAPIFaults(t *testing.T) {
	gr := schema.GroupResource{Resource: "any"}
	faults := []struct {
		name string
		err  error
	}{
		{"409", apierrors.NewConflict(gr, "x", errors.New("the object has been modified"))},
		{"429", apierrors.NewTooManyRequests("slow down", 1)},
		{"500", apierrors.NewInternalError(errors.New("boom"))},
		{"503", apierrors.NewServiceUnavailable("unavailable")},
		{"timeout", apierrors.NewTimeoutError("request timed out", 1)},
		{"net", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}},
	}
	opts := world.Opts{Nodes: 3, Operator: true}
	ref := world.New(t, opts)
	ref.InjectFault(0, nil)
	if _, stderr, code, _ := run(ref, 0, scale41...); code != 0 {
		t.Fatalf("reference: %d\n%s", code, stderr)
	}
	total, _ := ref.Requests()
	covered := map[int]int{}
	for k := 1; k <= total; k++ {
		f := faults[k%len(faults)]
		w := world.New(t, opts)
		w.InjectFault(k, f.err)
		_, stderr, code, _ := run(w, 0, scale41...)
		_, hit := w.Requests()
		w.InjectFault(0, nil)
		switch code {
		case 0:
		case exit.Error, exit.Interrupted, operation.ExitRefused:
			if code == exit.Interrupted && !strings.Contains(stderr, "kubectl cassandra resume") {
				t.Fatalf("fault %s at request %d (%s): exit 4 without a resume hint\n%s", f.name, k, hit, stderr)
			}
			// Finish with the same command (it resumes a checkpoint of the same target).
			if _, stderr2, code2, _ := run(w, 0, scale41...); code2 != 0 {
				t.Fatalf("fault %s at request %d (%s): first run exit %d, rerun exit %d\n%s\n----\n%s", f.name, k, hit, code, code2, stderr, stderr2)
			}
		default:
			t.Fatalf("fault %s at request %d (%s): exit %d\n%s", f.name, k, hit, code, stderr)
		}
		covered[code]++
		w.AssertConverged(1, fmt.Sprintf("fault %s at request %d (%s)", f.name, k, hit))
		if w.DeploymentReplicas("casskop") != 1 {
			t.Fatalf("fault %s at request %d (%s): operator not restored", f.name, k, hit)
		}
	}
	t.Logf("API faults: %d fault points (every request of a 3->1 scale-down), outcomes by exit code: %v", total, covered)
	fmt.Printf("API faults: %d fault points covered, all converged (exit codes %v)\n", total, covered)
}
