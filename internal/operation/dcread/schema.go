package dcread

import (
	"context"
	"fmt"
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

// Agreed asks pod (one of the readers) for the cluster's schema versions: true when
// every node agrees (SchemaAgreed).
func (m Readers) Agreed(ctx context.Context, pod string) (bool, error) {
	d, ok := m.Nodetool.(Describer)
	if !ok {
		return false, fmt.Errorf("this nodetool client cannot run describecluster")
	}
	desc, err := d.DescribeCluster(ctx, pod)
	if err != nil {
		return false, err
	}
	return SchemaAgreed(desc), nil
}
