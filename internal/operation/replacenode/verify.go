package replacenode

import (
	"fmt"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Done means verified, never "the task said so" (cass-operator #748): the replacement
// is UN in a successful ring read by another node, owns as many tokens as the dead node
// did, and the dead Host ID is gone from the ring (a replacement on another address
// takes a new one) or is the replacement's own (same address: §4.4). A replacement that
// holds no data at the end is said (its ranges had no other replica: RF 1).

// phase is where a replacement stands in one ring read.
type phase struct {
	// done: verified. what: what it waits for, when not done.
	done bool
	what string
	// joining: the replacement is listed UJ (streaming).
	joining bool
	// empty: done, and the replacement holds no data.
	empty bool
	// newNode: the Host ID of the new pod's node, which joined as a new node while the
	// dead node is still listed (with an error). asNew: done, but that node (recorded
	// as rep.NewNode) is UN and the dead node gone: removed, not replaced.
	newNode string
	asNew   bool
}

// judge reads the replacement of rep on the new pod's address newIP out of ring (read
// by another node). An error means the outcome is wrong for good (a new node with its
// own tokens instead of a replacement).
func judge(rep *record.Replacement, newIP string, ring pubnodetool.Ring) (phase, error) {
	if newIP == "" {
		return phase{what: "the new pod has no address yet"}, nil
	}
	row, listed := ring.ByAddress(newIP)
	old, oldListed := ring.ByHostID(rep.HostID)
	same := pubnodetool.SameAddress(newIP, rep.Address)
	if !listed {
		return phase{what: "the replacement has not joined the ring yet (a replace first waits for gossip: about 90 s with Cassandra's default delays, §4.3)"}, nil
	}
	if same {
		// The replacement keeps the dead node's Host ID and shows DN until it is NORMAL.
		switch {
		case row.HostID != rep.HostID:
			return phase{}, fmt.Errorf("the node on %s has Host ID %s, not the dead node's %s: it did not replace it", newIP, row.HostID, rep.HostID)
		case row.Code() != "UN":
			return phase{what: fmt.Sprintf("the replacement on the same address %s is %s (it shows DN until it is NORMAL, §4.4)", newIP, row.Code())}, nil
		}
	} else {
		if row.HostID == rep.HostID {
			return phase{what: "the ring still lists the dead node's Host ID on the new address"}, nil
		}
		if oldListed {
			// A replacement's bootstrap tokens take over every token of the dead node, so
			// its row goes as soon as the replacement is announced (§4.4): both listed
			// means the new pod started as a new node, with new tokens.
			return phase{newNode: row.HostID}, fmt.Errorf("the new pod's node (%s, Host ID %s, %s) joined as a new node with tokens of its own while the dead node (%s, Host ID %s) is still %s in the ring: "+
				"the replace option did not reach it", newIP, row.HostID, row.Code(), old.Address, old.HostID, old.Code())
		}
		if rep.NewNode != "" && row.HostID == rep.NewNode {
			// The node found joined as a new node, the dead one removed since: nothing
			// to take over, the end is that node UN.
			if row.Code() != "UN" {
				return phase{what: fmt.Sprintf("the dead node is removed; the new pod's node %s (Host ID %s, joined as a new node) is %s", newIP, row.HostID, row.Code())}, nil
			}
			return phase{done: true, asNew: true}, nil
		}
		if row.Code() == "UJ" {
			return phase{what: fmt.Sprintf("the replacement %s is UJ, streaming the dead node's data", newIP), joining: true}, nil
		}
		if row.Code() != "UN" {
			return phase{what: fmt.Sprintf("the replacement %s is %s", newIP, row.Code())}, nil
		}
	}
	if got := tokenCount(row); got != rep.Tokens {
		return phase{}, fmt.Errorf("the replacement %s owns %d tokens, the dead node owned %d: it did not take over the dead node's tokens", newIP, got, rep.Tokens)
	}
	if _, ok := operation.ParseLoad(row.Load); !ok {
		return phase{what: fmt.Sprintf("the replacement %s is UN with Load %q: waiting until it reports its data", newIP, row.Load)}, nil
	}
	return phase{done: true, empty: emptyLoad(row.Load)}, nil
}

// emptyLoad reports whether a Load holds no data: a replacement that streamed nothing
// (every range's only replica was the dead node: RF 1, the data is lost).
func emptyLoad(load string) bool {
	l, ok := operation.ParseLoad(load)
	return ok && l <= 0
}
