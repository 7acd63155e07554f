package nodetool

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"testing"
)

// A member of the datacenter is accounted for by a pod at its address (IPv6 in either
// form); members of other datacenters are not asked about.
func TestUnaccounted(t *testing.T) {
	r := nodetool.Ring{Nodes: []nodetool.Node{
		{DC: "dc1", Status: "U", State: "N", Address: "10.0.0.1", HostID: "a"},
		{DC: "dc1", Status: "D", State: "N", Address: "10.0.0.9", HostID: "gone"},
		{DC: "dc1", Status: "U", State: "N", Address: "fd00:10:244:0:0:0:0:b", HostID: "v6"},
		{DC: "dc2", Status: "D", State: "N", Address: "10.1.0.1", HostID: "other"},
	}}
	got := r.Unaccounted("dc1", []string{"10.0.0.1", "fd00:10:244::b", ""})
	if len(got) != 1 || got[0].HostID != "gone" {
		t.Fatalf("unaccounted %+v, want only the DN member at 10.0.0.9", got)
	}
	if got := r.Unaccounted("dc1", nil); len(got) != 3 {
		t.Fatalf("with no pod every member of dc1 is unaccounted, got %+v", got)
	}
}
