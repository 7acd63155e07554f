package nodetool

import "fmt"

// Mode is StorageService's operation mode, the first line of `nodetool netstats`.
type Mode string

// The operation modes of Cassandra 3.11 to 5.0 (5.0 adds the *_FAILED ones).
const (
	ModeStarting           Mode = "STARTING"
	ModeNormal             Mode = "NORMAL"
	ModeJoining            Mode = "JOINING"
	ModeJoiningFailed      Mode = "JOINING_FAILED"
	ModeLeaving            Mode = "LEAVING"
	ModeDecommissioned     Mode = "DECOMMISSIONED"
	ModeDecommissionFailed Mode = "DECOMMISSION_FAILED"
	ModeMoving             Mode = "MOVING"
	ModeDraining           Mode = "DRAINING"
	ModeDrained            Mode = "DRAINED"
)

// UnreachableError means nodetool ran but could not connect to Cassandra's JMX port
// (Cassandra down, starting, or refusing to start): a decommissioned node whose process
// restarted refuses to start, so a kind may let the ring decide.
type UnreachableError struct {
	Pod, Message string
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("nodetool on %s cannot reach Cassandra: %s", e.Pod, e.Message)
}
