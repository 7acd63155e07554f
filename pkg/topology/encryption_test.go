package topology

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInternodeOf(t *testing.T) {
	enc := func(mode string) map[string]any {
		return map[string]any{"cassandra-yaml": map[string]any{"server_encryption_options": map[string]any{"internode_encryption": mode}}}
	}
	assert.Equal(t, "", InternodeOf(nil, map[string]any{"cassandra-yaml": map[string]any{"num_tokens": 16}}))
	assert.Equal(t, "all", InternodeOf(enc("all")))
	assert.Equal(t, "none", InternodeOf(enc("all"), enc("none")), "the datacenter's config overrides the cluster's")
	assert.Equal(t, "rack", InternodeOf(enc("rack"), nil))

	m, ok := ConfigOf(json.RawMessage(`"{\"cassandra-yaml\":{\"server_encryption_options\":{\"internode_encryption\":\"dc\"}}}"`))
	assert.True(t, ok)
	assert.Equal(t, "dc", InternodeOf(m), "a config given as a string of JSON")
	_, ok = ConfigOf(json.RawMessage(`[1]`))
	assert.False(t, ok)
}

func TestEncryptionWarning(t *testing.T) {
	assert.Empty(t, Encryption{}.Warning(false))
	assert.Empty(t, Encryption{Internode: "none"}.Warning(true))
	assert.Empty(t, Encryption{Internode: "dc"}.Warning(false), "one datacenter: no stream crosses one")
	assert.Contains(t, Encryption{Internode: "dc"}.Warning(true), "streams to other datacenters are encrypted")
	assert.Contains(t, Encryption{Internode: "all"}.Warning(false), "zero-copy streaming is off")
	assert.Contains(t, Encryption{Unknown: "spec.configMapName y provides cassandra.yaml"}.Warning(false), "cannot be told from the cluster resource (spec.configMapName y")
}
