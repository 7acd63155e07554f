package topology

import (
	"encoding/json"
	"fmt"
)

// Encryption is what a cluster resource says of Cassandra's internode encryption
// (cassandra.yaml server_encryption_options.internode_encryption): when streams are
// encrypted, zero-copy streaming is off and a stream throughput limit may not be
// reached (docs/how-it-works/streaming.md §1).
type Encryption struct {
	// Internode is the setting: "none", "all", "dc" or "rack" ("" when the resource
	// sets none: Cassandra's default, none).
	Internode string `json:"internode,omitempty"`
	// Unknown, when set, says why the resource cannot tell (the cassandra.yaml comes
	// from a ConfigMap or a Secret the plugin does not read).
	Unknown string `json:"unknown,omitempty"`
}

// InternodeOf reads server_encryption_options.internode_encryption from cassandra.yaml
// fragments as operators keep them in their specs (the "cassandra-yaml" key of a
// config), a later fragment overriding an earlier one (CassKop: the cluster's config,
// then the datacenter's).
func InternodeOf(configs ...map[string]any) string {
	mode := ""
	for _, c := range configs {
		yaml, _ := c["cassandra-yaml"].(map[string]any)
		opts, _ := yaml["server_encryption_options"].(map[string]any)
		if v, ok := opts["internode_encryption"]; ok {
			mode = fmt.Sprint(v)
		}
	}
	return mode
}

// Warning says what internode encryption means for a stream throughput limit ("" when
// streams within the datacenter are not encrypted).
func (e Encryption) Warning(multiDC bool) string {
	switch e.Internode {
	case "", "none":
	case "dc":
		if multiDC {
			return "internode encryption is \"dc\": streams to other datacenters are encrypted, so zero-copy streaming is off for them and their rate may stay below the limit"
		}
		return ""
	default:
		return fmt.Sprintf("internode encryption is %q: streams are encrypted, so zero-copy streaming is off and the rate may stay well below the limit (encryption costs CPU)", e.Internode)
	}
	if e.Unknown != "" {
		return "whether internode encryption is on cannot be told from the cluster resource (" + e.Unknown + "): if it is, zero-copy streaming is off and the rate may stay below the limit"
	}
	return ""
}

// ConfigOf reads an operator's config field (an object, or a string of JSON) as a map;
// ok is false when it is neither.
func ConfigOf(raw json.RawMessage) (map[string]any, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = []byte(s)
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}
