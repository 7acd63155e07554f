package cassoperator

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// The grammars cass-operator cleans names against: a label value's runs (alphanumeric at
// both ends, '-', '_', '.' inside), a DNS-1035 label and a DNS-1123 subdomain (the
// Kubernetes formats). Its cleaners keep every match of the grammar, in order, and join
// them (apis/cassandra/v1beta1/cassandradatacenter_types.go CleanLabelValue,
// CleanupForKubernetes, CleanupSubdomain).
var (
	labelValueRun = regexp.MustCompile(`[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?`)
	dns1035Run    = regexp.MustCompile(`[a-z](?:[-a-z0-9]*[a-z0-9])?`)
	subdomainRun  = regexp.MustCompile(`[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*`)
)

// CleanLabelValue is the label value cass-operator derives from a name (cluster,
// datacenter and rack labels): spaces dropped, then only the parts that may stand in a
// label value (CleanLabelValue in cassandradatacenter_types.go).
func CleanLabelValue(s string) string {
	return strings.Join(labelValueRun.FindAllString(strings.ReplaceAll(s, " ", ""), -1), "")
}

// CleanupForKubernetes is the object-name part cass-operator derives from a name
// (clusterName and the datacenter in StatefulSet and service names): the name itself when
// it is a valid DNS-1035 label, else lower-cased, '_' as '-', and only the parts that
// fit the grammar (CleanupForKubernetes in cassandradatacenter_types.go).
func CleanupForKubernetes(s string) string {
	if len(validation.IsDNS1035Label(s)) == 0 {
		return s
	}
	s = strings.ReplaceAll(strings.ToLower(s), "_", "-")
	return strings.Join(dns1035Run.FindAllString(s, -1), "")
}

// CleanupSubdomain is CleanupForKubernetes for a DNS-1123 subdomain (the rack in a
// StatefulSet's name; CleanupSubdomain in cassandradatacenter_types.go).
func CleanupSubdomain(s string) string {
	if len(validation.IsDNS1123Subdomain(s)) == 0 {
		return s
	}
	s = strings.ReplaceAll(strings.ToLower(s), "_", "-")
	return strings.Join(subdomainRun.FindAllString(s, -1), "")
}

// StatefulSetName is the StatefulSet of a rack: <clusterName>-<dc>-<rack>-sts, each part
// cleaned (pkg/reconciliation/construct_statefulset.go NewNamespacedNameForStatefulSet).
// dcPart is the datacenter's resource name (DCResourceName).
func StatefulSetName(clusterName, dcPart, rack string) string {
	return CleanupForKubernetes(clusterName) + "-" + dcPart + "-" + CleanupSubdomain(rack) + "-sts"
}

// DCResourceName is the datacenter's part of object names: status.datacenterName when
// the operator recorded one (it records metadata.name once the DC is first Ready, and
// older releases recorded the spec.datacenterName override there), else metadata.name;
// cleaned (LabelResourceName in cassandradatacenter_types.go, setOperatorProgressStatus
// in pkg/reconciliation/constructor.go).
func DCResourceName(name, statusDatacenterName string) string {
	if statusDatacenterName != "" {
		return CleanupForKubernetes(statusDatacenterName)
	}
	return CleanupForKubernetes(name)
}

// RackLabels are the labels cass-operator gives a rack's StatefulSet, pods and claims,
// the StatefulSet's selector: cluster = the cleaned spec.clusterName, datacenter = the
// cleaned metadata.name (not the datacenterName override), rack = the cleaned rack name
// (GetRackLabels, GetDatacenterLabels, GetClusterLabels in cassandradatacenter_types.go).
func RackLabels(clusterName, name, rack string) map[string]string {
	return map[string]string{
		LabelCluster:    CleanLabelValue(clusterName),
		LabelDatacenter: CleanLabelValue(name),
		LabelRack:       CleanLabelValue(rack),
	}
}

// SplitRacks is how cass-operator splits a datacenter's size over its racks, in spec
// order: size/racks each, the first size%racks racks one more
// (apis/cassandra/v1beta1/cassandradatacenter_types.go SplitRacks, used by
// CalculateRackInformation in pkg/reconciliation/reconcile_racks.go).
func SplitRacks(size, racks int) []int {
	if racks <= 0 {
		return nil
	}
	out := make([]int, racks)
	for i := range out {
		out[i] = size / racks
		if i < size%racks {
			out[i]++
		}
	}
	return out
}

// splitText is counts in rack order: "r1=2, r2=2, r3=1".
func splitText(order []string, counts map[string]int) string {
	parts := make([]string, len(order))
	for i, r := range order {
		parts[i] = fmt.Sprintf("%s=%d", r, counts[r])
	}
	return strings.Join(parts, ", ")
}

// rackOrder is the names of dc's racks in spec order.
func rackOrder(dc topology.DC) []string {
	out := make([]string, len(dc.Racks))
	for i, r := range dc.Racks {
		out[i] = r.Name
	}
	return out
}
