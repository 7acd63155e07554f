package nodetool

import (
	"strconv"
	"strings"
)

// ReplicatedIn names, in describecluster's order, the keyspaces that place replicas in
// datacenter dc: NetworkTopologyStrategy with a factor above 0 there, SimpleStrategy
// (every datacenter) and any other non-local strategy. LocalStrategy keyspaces (system,
// system_schema) have no replicas elsewhere. Empty when describecluster printed no
// keyspace (3.11).
func (d ClusterDescription) ReplicatedIn(dc string) []string {
	var out []string
	for _, ks := range d.Keyspaces {
		class := ks.Class
		if i := strings.LastIndexByte(class, '.'); i >= 0 {
			class = class[i+1:]
		}
		switch class {
		case "LocalStrategy":
			continue
		case "NetworkTopologyStrategy":
			if rf, err := strconv.Atoi(ks.Options[dc]); err != nil || rf <= 0 {
				continue
			}
		}
		out = append(out, ks.Name)
	}
	return out
}
