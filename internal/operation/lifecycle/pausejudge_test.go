package lifecycle

import (
	"strings"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/kinds"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// TestHolderRecord: a pause holder whose cluster carries no checkpoint is gone (the
// record is the proof, the claim is not); a checkpoint that cannot be decoded leaves
// it standing, unknown (an error, never "gone").
func TestHolderRecord(t *testing.T) {
	schemas := kinds.Registry().Schemas()
	cl := topology.Cluster{Namespace: "ns", Name: "c1", UID: "u1"}
	why, stands, err := holderRecord(cl, schemas, "op-1")
	if err != nil || stands || !strings.Contains(why, "checkpoint of operation op-1 is gone from ns/c1") {
		t.Errorf("no checkpoint: why %q stands %v err %v", why, stands, err)
	}
	cl.Annotations = map[string]string{checkpoint.Annotation: "{not json"}
	if _, stands, err := holderRecord(cl, schemas, "op-1"); err == nil || stands {
		t.Errorf("undecodable checkpoint: stands %v err %v, want an error", stands, err)
	}
}
