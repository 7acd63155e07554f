package status

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// TestBuildOperatorThatActs: for an operator that scales the datacenter itself
// (cass-operator), running is expected, not busy, and not running is what status warns
// about; its own state of each pod is a column of its own.
func TestBuildOperatorThatActs(t *testing.T) {
	r := idle()
	r.Acts = true
	r.PodState = func(l map[string]string) string { return l["state"] }
	for i := range r.Pods {
		r.Pods[i].Labels = map[string]string{"state": "Started"}
	}
	if rep := Build(r); len(rep.OperatorBusy) != 1 || !strings.Contains(rep.OperatorBusy[0], "no running CassKop manages namespace ns") {
		t.Fatalf("no operator running: busy = %q", rep.OperatorBusy)
	}
	r.Operators = []operator.Controller{{Namespace: "ops", Name: "cass-operator", Replicas: 1, IsRunning: true}}
	rep := Build(r)
	if len(rep.OperatorBusy) != 0 || len(rep.Operators) != 1 {
		t.Fatalf("operator running: busy %q, operators %q", rep.OperatorBusy, rep.Operators)
	}
	var b bytes.Buffer
	Text(&b, rep, Style{Paint: output.Painter{}})
	for _, want := range []string{"idle, running (ops/cass-operator): it scales the datacenter itself", "OPERATOR", "Started"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("text lacks %q:\n%s", want, b.String())
		}
	}
}
