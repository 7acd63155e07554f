package nodetool

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"reflect"
	"testing"
)

// TestSendsUnbootstrap: the leaving node sends its Unbootstrap plan; a receiving peer
// lists the same plan but does not leave; a plan whose sessions cannot be read counts as
// sending (unknown is never "not leaving").
func TestSendsUnbootstrap(t *testing.T) {
	for _, tc := range []struct {
		file string
		want bool
	}{
		{"netstats-4.1-leaving-streaming.txt", true},
		{"netstats-3.11-leaving-streaming.txt", true},
		{"netstats-4.1-normal-receiving.txt", false},
		{"netstats-4.1-leaving-idle.txt", false},
		{"netstats-5.0-decommission-failed.txt", false},
	} {
		ns, err := ParseNetstats(fixture(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if got := ns.SendsUnbootstrap(); got != tc.want {
			t.Errorf("%s: SendsUnbootstrap = %v, want %v", tc.file, got, tc.want)
		}
	}
	if !(Netstats{Mode: nodetool.ModeDecommissionFailed, Streaming: true}).SendsUnbootstrap() {
		t.Error("a listed plan with unreadable sessions must count as sending")
	}
}

// TestLeavingEvidence: CASSANDRA-21493/21583, a mode that reads DECOMMISSION_FAILED is
// no failure while the node streams out or a peer sees it leaving or gone.
func TestLeavingEvidence(t *testing.T) {
	streaming, err := ParseNetstats(fixture(t, "netstats-4.1-leaving-streaming.txt"))
	if err != nil {
		t.Fatal(err)
	}
	failed := Netstats{Mode: nodetool.ModeDecommissionFailed}
	un := nodetool.Node{Status: "U", State: "N"}
	ul := nodetool.Node{Status: "U", State: "L"}
	dl := nodetool.Node{Status: "D", State: "L"}
	for _, tc := range []struct {
		name   string
		ns     Netstats
		row    nodetool.Node
		listed bool
		want   string
	}{
		{"refused: UN, no stream", failed, un, true, ""},
		{"streaming", streaming, un, true, "its netstats list an Unbootstrap stream it sends"},
		{"peer sees UL", failed, ul, true, "p-0 sees it UL (leaving)"},
		{"peer sees DL", failed, dl, true, "p-0 sees it DL (leaving)"},
		{"gone from the ring", failed, nodetool.Node{}, false, "the ring read on p-0 no longer lists it (LEFT announced)"},
	} {
		if got := LeavingEvidence(tc.ns, tc.row, tc.listed, "p-0"); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestReplicatedIn: the keyspaces a repair of a datacenter covers leave out the local
// ones and those with no replica there.
func TestReplicatedIn(t *testing.T) {
	d, err := ParseDescribeCluster(fixture(t, "describecluster-4.1-leaving.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"system_auth", "system_distributed", "system_traces", "app"}
	if got := d.ReplicatedIn("dc1"); !reflect.DeepEqual(got, want) {
		t.Errorf("dc1: %v, want %v", got, want)
	}
	if got := d.ReplicatedIn("dc2"); got != nil {
		t.Errorf("dc2: %v, want none", got)
	}
	d.Keyspaces = append(d.Keyspaces, Keyspace{Name: "old", Class: "org.apache.cassandra.locator.SimpleStrategy", Options: map[string]string{"replication_factor": "2"}})
	if got := d.ReplicatedIn("dc2"); !reflect.DeepEqual(got, []string{"old"}) {
		t.Errorf("SimpleStrategy: %v", got)
	}
}
