package cassoperator

import (
	"slices"
	"testing"
)

// TestCleaners: the names cass-operator derives from clusterName, the datacenter and
// rack names (cassandradatacenter_types.go CleanLabelValue, CleanupForKubernetes,
// CleanupSubdomain).
func TestCleaners(t *testing.T) {
	for _, tc := range []struct{ in, label, k8s, sub string }{
		{"development", "development", "development", "development"},
		{"My Cluster", "MyCluster", "mycluster", "mycluster"},
		{"My_Cluster", "My_Cluster", "my-cluster", "my-cluster"},
		{"-a.b-", "a.b", "ab", "a.b"},
		{"1st", "1st", "st", "1st"},
		{"rack1", "rack1", "rack1", "rack1"},
		{"Rack!1", "Rack1", "rack", "rack1"},
	} {
		if got := CleanLabelValue(tc.in); got != tc.label {
			t.Errorf("CleanLabelValue(%q) = %q, want %q", tc.in, got, tc.label)
		}
		if got := CleanupForKubernetes(tc.in); got != tc.k8s {
			t.Errorf("CleanupForKubernetes(%q) = %q, want %q", tc.in, got, tc.k8s)
		}
		if got := CleanupSubdomain(tc.in); got != tc.sub {
			t.Errorf("CleanupSubdomain(%q) = %q, want %q", tc.in, got, tc.sub)
		}
	}
}

// TestSplitRacks: the first racks take the extra nodes.
func TestSplitRacks(t *testing.T) {
	for _, tc := range []struct {
		size, racks int
		want        []int
	}{
		{3, 1, []int{3}},
		{3, 3, []int{1, 1, 1}},
		{5, 3, []int{2, 2, 1}},
		{7, 3, []int{3, 2, 2}},
		{4, 2, []int{2, 2}},
		{2, 3, []int{1, 1, 0}},
		{0, 2, []int{0, 0}},
	} {
		if got := SplitRacks(tc.size, tc.racks); !slices.Equal(got, tc.want) {
			t.Errorf("SplitRacks(%d, %d) = %v, want %v", tc.size, tc.racks, got, tc.want)
		}
	}
}
