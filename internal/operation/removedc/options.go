package removedc

import (
	"encoding/json"
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Options are remove-dc's own part of the request (pkg/operation.Request.Ext).
type Options struct {
	// AlterKeyspaces: the keyspaces that still replicate to the datacenter get it
	// dropped by the plugin, as planned steps (--alter-keyspaces); else they refuse.
	AlterKeyspaces bool
	// CQLSecret is the Secret with the CQL superuser's username and password cqlsh
	// logs in with (--cql-secret; "": none, or the operator's default).
	CQLSecret string
}

// ext is remove-dc's own record in the checkpoint (record.Checkpoint.Ext): what a
// resumed run needs that the world does not say.
type ext struct {
	// CQLSecret names the Secret cqlsh logs in with ("": none).
	CQLSecret string `json:"cqlSecret,omitempty"`
	// Readers are the pods of the datacenters that stay the plan found in the ring:
	// the only ones the steps read the ring, the keyspaces and the schema from.
	Readers []string `json:"readers"`
	// Keyspaces are the keyspaces the plan found replicating to the datacenter (their
	// change is alter-keyspaces', which asks the world again).
	Keyspaces []string `json:"keyspaces,omitempty"`
}

func (e ext) encode() json.RawMessage {
	b, _ := json.Marshal(e) // a struct of strings always encodes
	return b
}

// extOf reads cp's record; a broken one is an error naming the operation.
func extOf(cp *record.Checkpoint) (ext, error) {
	var e ext
	if len(cp.Ext) == 0 {
		return e, nil
	}
	if err := json.Unmarshal(cp.Ext, &e); err != nil {
		return e, fmt.Errorf("operation %s: its remove-dc record is not readable (%v): abort it", cp.OperationID, err)
	}
	return e, nil
}
