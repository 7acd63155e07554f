// Package topology describes a Cassandra cluster as the plugin sees it: datacenters,
// racks and the StatefulSet behind each rack, independent of the operator's CRD.
package topology

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Cluster is a Cassandra cluster resource, read through an operator plugin.
type Cluster struct {
	Operator      string            `json:"operator"`
	APIVersion    string            `json:"apiVersion"`
	Namespace     string            `json:"namespace"`
	Name          string            `json:"name"`
	UID           string            `json:"uid"`
	ServerVersion string            `json:"serverVersion,omitempty"`
	DCs           []DC              `json:"dcs"`
	Annotations   map[string]string `json:"-"`
	// Busy lists why the operator is not idle (empty when idle).
	Busy []string `json:"busy,omitempty"`
	// Deleting is set when the resource is being deleted (metadata.deletionTimestamp):
	// no operation may start or go on.
	Deleting bool `json:"deleting,omitempty"`
	// Seeds are the pods the operator lists as seeds (CassKop's status.seedlist, by pod
	// name). A new pod among them would start as a seed and skip bootstrap.
	Seeds []string `json:"seeds,omitempty"`
}

// IsSeed reports whether the operator lists pod as a seed.
func (c Cluster) IsSeed(pod string) bool {
	for _, s := range c.Seeds {
		if s == pod {
			return true
		}
	}
	return false
}

// DC is a datacenter and its racks.
type DC struct {
	Name  string `json:"name"`
	Racks []Rack `json:"racks"`
	// Spec is the operator's words for what the resource asks of the DC, for display
	// ("nodesPerRacks 3").
	Spec string `json:"-"`
	// Encryption is what the resource says of internode encryption (encryption.go).
	Encryption Encryption `json:"-"`
}

// Rack is one rack, backed by one StatefulSet whose pods carry Labels.
type Rack struct {
	DC          string            `json:"dc"`
	Name        string            `json:"name"`
	StatefulSet string            `json:"statefulSet"`
	Labels      map[string]string `json:"labels"`
	// Nodes is the count the cluster resource asks for this rack. Racks of one DC may
	// differ (cass-operator splits a DC's size over its racks, the first ones taking one
	// more); CassKop's are always equal.
	Nodes int `json:"nodes"`
}

// RackNodes is the count the resource asks for each rack of the DC, by rack name.
func (d DC) RackNodes() map[string]int {
	m := make(map[string]int, len(d.Racks))
	for _, r := range d.Racks {
		m[r.Name] = r.Nodes
	}
	return m
}

// CountsText is counts by rack in words: "rack1=3, rack2=2", racks sorted.
func CountsText(counts map[string]int) string {
	names := slices.Sorted(maps.Keys(counts))
	for i, r := range names {
		names[i] = fmt.Sprintf("%s=%d", r, counts[r])
	}
	return strings.Join(names, ", ")
}

// CountText is a count per rack in words: one number when every rack has it ("3"), else
// each rack's ("rack1=3, rack2=2").
func CountText(counts map[string]int) string {
	n, equal := -1, true
	for _, c := range counts {
		if n >= 0 && c != n {
			equal = false
		}
		n = c
	}
	if equal && n >= 0 {
		return fmt.Sprint(n)
	}
	return CountsText(counts)
}

// MaxNodes is the largest count the resource asks for a rack of the DC.
func (d DC) MaxNodes() int {
	n := 0
	for _, r := range d.Racks {
		n = max(n, r.Nodes)
	}
	return n
}

// Rack returns the rack of the DC named name.
func (d DC) Rack(name string) (Rack, bool) {
	for _, r := range d.Racks {
		if r.Name == name {
			return r, true
		}
	}
	return Rack{}, false
}

// LabelSelector renders Labels as a selector string, keys sorted.
func (r Rack) LabelSelector() string {
	keys := slices.Sorted(maps.Keys(r.Labels))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + r.Labels[k]
	}
	return strings.Join(parts, ",")
}

// DC returns the datacenter named name.
func (c Cluster) DC(name string) (DC, bool) {
	for _, d := range c.DCs {
		if d.Name == name {
			return d, true
		}
	}
	return DC{}, false
}

// DCNames lists the datacenter names.
func (c Cluster) DCNames() []string {
	var n []string
	for _, d := range c.DCs {
		n = append(n, d.Name)
	}
	return n
}

// RackNames lists the rack names of a DC (of every DC when dc is empty), deduplicated.
func (c Cluster) RackNames(dc string) []string {
	seen := map[string]bool{}
	var n []string
	for _, d := range c.DCs {
		if dc != "" && d.Name != dc {
			continue
		}
		for _, r := range d.Racks {
			if !seen[r.Name] {
				seen[r.Name] = true
				n = append(n, r.Name)
			}
		}
	}
	return n
}

// Racks returns all racks, in spec order.
func (c Cluster) Racks() []Rack {
	var rs []Rack
	for _, d := range c.DCs {
		rs = append(rs, d.Racks...)
	}
	return rs
}

// Select resolves --dc/--rack to a DC and its racks to operate on. An empty rack means
// every rack of the DC; an empty dc is allowed when the rack name (or the cluster's
// only DC) identifies it.
func (c Cluster) Select(dc, rack string) (DC, []Rack, error) {
	if dc != "" {
		d, ok := c.DC(dc)
		if !ok {
			return DC{}, nil, fmt.Errorf("cluster %s has no datacenter %q (datacenters: %s)", c.Name, dc, strings.Join(c.DCNames(), ", "))
		}
		if rack == "" {
			return d, d.Racks, nil
		}
		for _, r := range d.Racks {
			if r.Name == rack {
				return d, []Rack{r}, nil
			}
		}
		return DC{}, nil, fmt.Errorf("datacenter %s of cluster %s has no rack %q (racks: %s)", dc, c.Name, rack, strings.Join(c.RackNames(dc), ", "))
	}
	if rack == "" {
		if len(c.DCs) == 1 {
			return c.DCs[0], c.DCs[0].Racks, nil
		}
		return DC{}, nil, fmt.Errorf("cluster %s has several datacenters (%s): name one with --dc", c.Name, strings.Join(c.DCNames(), ", "))
	}
	var found []DC
	var racks []Rack
	for _, d := range c.DCs {
		for _, r := range d.Racks {
			if r.Name == rack {
				found = append(found, d)
				racks = append(racks, r)
			}
		}
	}
	switch len(found) {
	case 0:
		return DC{}, nil, fmt.Errorf("cluster %s has no rack %q (racks: %s)", c.Name, rack, strings.Join(c.RackNames(""), ", "))
	case 1:
		return found[0], racks, nil
	}
	var names []string
	for _, d := range found {
		names = append(names, d.Name)
	}
	return DC{}, nil, fmt.Errorf("rack %q exists in several datacenters (%s): add --dc", rack, strings.Join(names, ", "))
}

// PodName is the name the StatefulSet controller gives pod ordinal of StatefulSet sts
// (Ordinal reads it back).
func PodName(sts string, ordinal int) string { return fmt.Sprintf("%s-%d", sts, ordinal) }

// Ordinal is the ordinal n of pod <sts>-<n>, the name the StatefulSet controller gives
// its pods; ok is false for a pod that is not the StatefulSet's.
func Ordinal(pod, sts string) (int, bool) {
	if !strings.HasPrefix(pod, sts+"-") {
		return 0, false
	}
	n, err := strconv.Atoi(pod[len(sts)+1:])
	return n, err == nil && n >= 0
}
