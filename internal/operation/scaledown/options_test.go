package scaledown

import (
	"testing"

	"github.com/spf13/pflag"

	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// TestScaleOptions: the scale command binds --remove-dead and --cleanup into its own
// options (Request.Ext), not the shared request; the next command says them again; a
// request asked otherwise (a grow-back's) carries none.
func TestScaleOptions(t *testing.T) {
	c := Kind{}.Command()
	fs := pflag.NewFlagSet("scale", pflag.ContinueOnError)
	var req pub.Request
	c.Flags(fs, &req)
	if err := fs.Parse([]string{"--rack", "r1", "--nodes", "2", "--remove-dead", "--cleanup"}); err != nil {
		t.Fatal(err)
	}
	got := pub.KindRequestOf[Options](req)
	if !got.Options.RemoveDead || !got.Options.Up.Cleanup || got.Rack != "r1" || got.Nodes != 2 {
		t.Fatalf("request %+v", got)
	}
	next := c.Next("ns", "c", &pub.Plan{DC: topology.DC{Name: "dc1"}}, req)
	if want := "kubectl cassandra scale -n ns c --dc dc1 --rack r1 --nodes 2 --yes --cleanup --remove-dead"; next != want {
		t.Fatalf("next %q, want %q", next, want)
	}
	if o := pub.KindRequestOf[Options](pub.Request{Nodes: 3}); o.Options.RemoveDead || o.Options.Up.Cleanup {
		t.Fatalf("no options: %+v", o)
	}
}
