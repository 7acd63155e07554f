package record

// Replacement is the dead node a replace-node replaces, read before anything changed:
// the identity every later step checks the world against (docs/how-it-works/replace.md
// §4). It is part of the checkpoint (replace); checkpoints without it decode as before.
type Replacement struct {
	// Pod is the pod whose node is replaced (its Node in Checkpoint.Nodes has the pod's
	// UID and claims as planned).
	Pod string `json:"pod"`
	// HostID, Address, Tokens and Load are the dead node's row in the ring read at
	// planning (Tokens: its token count; Load as printed). Reader is the UN node that
	// read it.
	HostID  string `json:"hostID"`
	Address string `json:"address"`
	Tokens  int    `json:"tokens"`
	Load    string `json:"load,omitempty"`
	Reader  string `json:"reader"`
	// Version is the Cassandra release the cluster runs (`nodetool version` on the
	// reader): which jvm options file it reads depends on it (§7.3).
	Version string `json:"version"`
	// ConfigMap, ConfigMapUID, Key and File, for an operator that starts its pods
	// through a script of the user's (operator.StartScript: CassKop's pre_run.sh): the
	// ConfigMap and key the replace option is written to, and the jvm options file
	// that script appends it to.
	ConfigMap    string `json:"configMap,omitempty"`
	ConfigMapUID string `json:"configMapUID,omitempty"`
	Key          string `json:"key,omitempty"`
	File         string `json:"file,omitempty"`
	// Task, for an operator that replaces nodes itself (operator.Tasks: cass-operator's
	// replacenode CassandraTask), is the task's name.
	Task string `json:"task,omitempty"`
	// Seed: the node is a seed and --allow-seed was given.
	Seed bool `json:"seed,omitempty"`
	// NewNode is the Host ID of the node the new pod started instead of a replacement
	// (the option did not reach it: it joined with tokens of its own, the dead node
	// still in the ring), as the wait found it: from then on the operation ends once
	// the dead node is removed, and says it was not replaced.
	NewNode string `json:"newNode,omitempty"`
}
