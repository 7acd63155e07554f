package replacenode

import (
	"testing"

	"github.com/spf13/pflag"

	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestReplaceOptions: --pod, --address and --allow-seed are the kind's own options
// (Request.Ext): checked, answered in flight and said again in the next command.
func TestReplaceOptions(t *testing.T) {
	c := Kind{}.Command()
	changed := func(string) bool { return false }
	fs := pflag.NewFlagSet("replace-node", pflag.ContinueOnError)
	var req pub.Request
	c.Flags(fs, &req)
	if err := c.Validate(req, changed); err == nil {
		t.Fatal("no --pod: not refused")
	}
	if err := fs.Parse([]string{"--pod", "p-2", "--address", "10.0.0.9", "--allow-seed"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(req, changed); err != nil {
		t.Fatal(err)
	}
	if got := pub.KindRequestOf[Options](req).Options; got != (Options{Pod: "p-2", Address: "10.0.0.9", AllowSeed: true}) {
		t.Fatalf("options %+v", got)
	}
	if next, want := c.Next("ns", "c", nil, req), "kubectl cassandra replace-node -n ns c --pod p-2 --address 10.0.0.9 --allow-seed --yes"; next != want {
		t.Fatalf("next %q, want %q", next, want)
	}
	inFlight := &record.Checkpoint{OperationID: "op", Kind: Name, Replace: &record.Replacement{Pod: "p-2"}}
	if a := c.InFlight(inFlight, pub.Asked{Request: req}); !a.Resume {
		t.Fatalf("same pod in flight: %+v", a)
	}
	if a := c.InFlight(inFlight, pub.Asked{Request: pub.Request{}}); a.Resume {
		t.Fatalf("another pod in flight: %+v", a)
	}
}
