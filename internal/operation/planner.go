package operation

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// NodeInfo is what the planner asks Cassandra: a node's Host ID and mode, the ring,
// keyspaces.
type NodeInfo interface {
	nodetool.StatusReader
	Info(ctx context.Context, pod string) (nodetool.Info, error)
	Netstats(ctx context.Context, pod string) (nodetool.Netstats, error)
	DescribeCluster(ctx context.Context, pod string) (nodetool.ClusterDescription, error)
}

// Planner reads the real world and turns a Request into a Plan. It changes nothing. It
// is the Toolkit (pkg/operation) of every Env the plugin plans with (toolkit.go).
type Planner struct {
	Client   kubernetes.Interface
	Nodetool NodeInfo
	// Exec runs a command in a pod with stdin (cqlsh: internal/cql); nil when the
	// pod exec cannot feed one.
	Exec  cql.Streamer
	Clock func() time.Time
	// Holder identifies this run in the checkpoint (Self() when empty).
	Holder record.Holder
	// ahead are the reads started before the plan asked for them (ReadAhead).
	ahead readsAhead
}

// Now is the planner's clock, in UTC.
func (p *Planner) Now() time.Time {
	if p.Clock != nil {
		return p.Clock().UTC()
	}
	return time.Now().UTC()
}

// NewCheckpoint fills what every checkpoint of kind has; the caller adds target, nodes
// and steps. idPrefix begins the operation's ID ("scale").
func (p *Planner) NewCheckpoint(cl topology.Cluster, kind pub.Kind, idPrefix string, req pub.Request) *record.Checkpoint {
	now := p.Now()
	holder := p.Holder
	if holder.Host == "" {
		holder = Self()
	}
	return &record.Checkpoint{
		SchemaVersion:  kind.Info().Checkpoint.Version,
		OperationID:    fmt.Sprintf("%s-%s-%s", idPrefix, now.Format("20060102-150405"), rand.String(5)),
		Kind:           kind.Info().Name,
		Operator:       cl.Operator,
		Namespace:      cl.Namespace,
		Cluster:        cl.Name,
		ClusterUID:     cl.UID,
		StartedBy:      holder,
		Holder:         holder,
		StartedAt:      now,
		UpdatedAt:      now,
		Force:          req.Force,
		PausedOperator: req.Pause,
	}
}
