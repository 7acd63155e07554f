package dcread

import (
	"context"
	"strings"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
)

// Describer is the nodetool read the schema agreement needs (the plugin's nodetool
// client has it).
type Describer interface {
	DescribeCluster(ctx context.Context, pod string) (nodetool.ClusterDescription, error)
}

// SchemaAgreed: one schema version, no node unreachable (an unreachable node has not
// seen the change yet: it is not agreement, nodetool lists it apart).
func SchemaAgreed(d nodetool.ClusterDescription) bool {
	versions := 0
	for v := range d.SchemaVersions {
		if strings.EqualFold(v, "UNREACHABLE") {
			return false
		}
		versions++
	}
	return versions == 1
}
