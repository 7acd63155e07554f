package adddc

import (
	"encoding/json"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Options are add-dc's own part of the request (pkg/operation.Request.Ext).
type Options struct {
	// Source is the datacenter the new one is rebuilt from (--rebuild-from).
	Source string
	// Racks are the new datacenter's racks (--racks; CassKop: default the source's).
	Racks []string
	// File is -f, Manifest its content (cass-operator: the new CassandraDatacenter).
	File     string
	Manifest []byte
	// Keyspaces limits the keyspaces given the datacenter (--keyspaces; default every
	// keyspace that replicates to Source); RF is their replicas there (--rf; 0: each
	// keyspace's in Source).
	Keyspaces []string
	RF        int
	// AlterKeyspaces: the plugin runs the ALTER KEYSPACE statements itself; else the
	// run stops before the rebuilds, naming them.
	AlterKeyspaces bool
	// CQLSecret is the Secret with the CQL superuser's username and password.
	CQLSecret string
}

// ext is add-dc's own record in the checkpoint (record.Checkpoint.Ext): what a resumed
// run needs that the world does not say.
type ext struct {
	Source    string `json:"source"`
	CQLSecret string `json:"cqlSecret,omitempty"`
	// Readers are the source datacenter's pods the plan found in the ring: the only ones
	// the steps read the ring, the keyspaces and the schema from.
	Readers []string `json:"readers"`
	// Wanted are the replicas each keyspace gets in the new datacenter.
	Wanted map[string]int `json:"wanted"`
	// Alter: the plugin changes the keyspaces (else the user does, and resume verifies).
	Alter bool `json:"alter,omitempty"`
	// Want is the datacenter asked of the operator; Racks the racks it makes of it.
	Want  operator.NewDatacenter `json:"want"`
	Racks []topology.Rack        `json:"racks"`
}

func (e ext) encode() json.RawMessage {
	b, _ := json.Marshal(e) // strings, ints and bytes always encode
	return b
}

// extOf reads cp's record; a broken one is an error naming the operation.
func extOf(cp *record.Checkpoint) (ext, error) {
	var e ext
	if len(cp.Ext) == 0 {
		return e, fmt.Errorf("operation %s: its add-dc record is missing: abort it", cp.OperationID)
	}
	if err := json.Unmarshal(cp.Ext, &e); err != nil {
		return e, fmt.Errorf("operation %s: its add-dc record is not readable (%v): abort it", cp.OperationID, err)
	}
	return e, nil
}
