package sim

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The keyspaces every simulated cluster has. system and system_schema use LocalStrategy
// (never replicated, never altered); the other system keyspaces and the user keyspaces
// use NetworkTopologyStrategy with a replication factor per DC.
const (
	ksSystem        = "system"
	ksSchema        = "system_schema"
	ksAuth          = "system_auth"
	ksDistributed   = "system_distributed"
	ksTraces        = "system_traces"
	classNTS        = "NetworkTopologyStrategy"
	classLocal      = "LocalStrategy"
	strategyPackage = "org.apache.cassandra.locator."
)

// keyspace is one row of system_schema.keyspaces: its name, strategy and, for
// NetworkTopologyStrategy, the replicas per DC (a DC absent from RF has none).
type keyspace struct {
	Name  string         `json:"name"`
	Class string         `json:"class"`
	RF    map[string]int `json:"rf,omitempty"`
}

// schema is the cluster's keyspaces and their schema version. Version 0 is the initial
// schema (schemaVersion); every ALTER bumps it. The node it ran on (ChangedBy) has the
// new version at once, the others once Options.SchemaAgreeTime has passed since
// ChangedAt (the migration push/pull of Schema.instance, which describecluster's
// "Schema versions" shows while it is on).
type schema struct {
	Keyspaces []*keyspace `json:"keyspaces"`
	Version   int         `json:"version"`
	ChangedAt time.Time   `json:"changedAt,omitzero"`
	ChangedBy string      `json:"changedBy,omitempty"`
}

// newSchema builds the initial keyspaces: every NTS keyspace replicates Options.RF
// times (user keyspaces after the first RF-1, at least 1, under MixedReplication) to
// each DC that has nodes, unless Options.Replication gives its map.
func newSchema(o Options, specs []NodeSpec) (schema, error) {
	var dcs []string
	seen := map[string]bool{}
	for _, sp := range specs {
		dc := sp.DC
		if dc == "" {
			dc = "dc1"
		}
		if !seen[dc] {
			seen[dc] = true
			dcs = append(dcs, dc)
		}
	}
	uniform := func(rf int) map[string]int {
		m := map[string]int{}
		for _, dc := range dcs {
			m[dc] = rf
		}
		return m
	}
	sc := schema{Keyspaces: []*keyspace{
		{Name: ksSystem, Class: classLocal},
		{Name: ksSchema, Class: classLocal},
		{Name: ksAuth, Class: classNTS, RF: uniform(o.RF)},
		{Name: ksDistributed, Class: classNTS, RF: uniform(o.RF)},
		{Name: ksTraces, Class: classNTS, RF: uniform(o.RF)},
	}}
	for i, k := range o.Keyspaces {
		if sc.keyspace(k) != nil {
			return sc, fmt.Errorf("sim: keyspace %q given twice (or a system keyspace)", k)
		}
		rf := o.RF
		if o.MixedReplication && i > 0 {
			rf = max(1, o.RF-1)
		}
		sc.Keyspaces = append(sc.Keyspaces, &keyspace{Name: k, Class: classNTS, RF: uniform(rf)})
	}
	for name, m := range o.Replication {
		ks := sc.keyspace(name)
		if ks == nil || ks.Class != classNTS {
			return sc, fmt.Errorf("sim: Options.Replication names %q, which is neither system_auth, system_distributed, system_traces nor in Keyspaces", name)
		}
		ks.RF = map[string]int{}
		for dc, rf := range m {
			if rf < 0 {
				return sc, fmt.Errorf("sim: Options.Replication[%q][%q] is negative", name, dc)
			}
			ks.RF[dc] = rf
		}
	}
	return sc, nil
}

func (sc *schema) keyspace(name string) *keyspace {
	for _, k := range sc.Keyspaces {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// rfIn is the keyspace's replicas in dc (NetworkTopologyStrategy.getReplicationFactor:
// 0 for a DC it does not name).
func (k *keyspace) rfIn(dc string) int { return k.RF[dc] }

// replicated are the keyspaces that are not LocalStrategy
// (Schema.getNonLocalStrategyKeyspaces), in the order the simulator reports them.
func (sc *schema) replicated() []*keyspace {
	var out []*keyspace
	for _, k := range sc.Keyspaces {
		if k.Class != classLocal {
			out = append(out, k)
		}
	}
	return out
}

// user are the user keyspaces (Schema.getUserKeyspaces: neither local nor replicated
// system keyspaces).
func (sc *schema) user() []*keyspace {
	var out []*keyspace
	for _, k := range sc.Keyspaces {
		switch k.Name {
		case ksSystem, ksSchema, ksAuth, ksDistributed, ksTraces:
		default:
			out = append(out, k)
		}
	}
	return out
}

// dcsOf lists the DCs of a replication map, sorted (a HashMap's order is not fixed;
// sorted is stable).
func dcsOf(m map[string]int) []string {
	dcs := make([]string, 0, len(m))
	for dc := range m {
		dcs = append(dcs, dc)
	}
	sort.Strings(dcs)
	return dcs
}

func sameRF(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for dc, rf := range a {
		if v, ok := b[dc]; !ok || v != rf {
			return false
		}
	}
	return true
}

// ownershipKeyspace is the keyspace whose settings a plain `status` computes effective
// ownership with, as StorageService.effectiveOwnership(null) picks it: the first user
// keyspace when they all have the same settings (else no effective ownership: ok is
// false), system_traces when there is none.
func (sc *schema) ownershipKeyspace() (k *keyspace, ok bool) {
	users := sc.user()
	if len(users) == 0 {
		return sc.keyspace(ksTraces), true
	}
	for _, u := range users[1:] {
		if u.Class != users[0].Class || !sameRF(u.RF, users[0].RF) {
			return nil, false
		}
	}
	return users[0], true
}

// maxRFIn is the highest replication factor of any keyspace in dc: the replica count
// that drives where a node's ranges go (removenode, replacement sources).
func (sc *schema) maxRFIn(dc string) int {
	rf := 0
	for _, k := range sc.replicated() {
		rf = max(rf, k.rfIn(dc))
	}
	return rf
}

// describeReplication is describecluster's "Replication class" cell: the strategy's
// simple class name and its options as a Java Map prints them
// (DescribeCluster: probe.getKeyspaceReplicationInfo).
func (k *keyspace) describeReplication() string {
	if k.Class == classLocal {
		return classLocal + " {}"
	}
	var parts []string
	for _, dc := range dcsOf(k.RF) {
		parts = append(parts, fmt.Sprintf("%s=%d", dc, k.RF[dc]))
	}
	return k.Class + " {" + strings.Join(parts, ", ") + "}"
}

// versionOf is the schema version n holds at now.
func (st *state) versionOf(n *node, now time.Time) string {
	sc := st.Schema
	v := sc.Version
	if v > 0 && n.Spec.Pod != sc.ChangedBy && now.Before(sc.ChangedAt.Add(st.Options.SchemaAgreeTime)) {
		v--
	}
	return schemaUUID(v)
}

// schemaUUID names schema version v: the fixtures' UUID for the initial schema, then
// name-based (version 3) UUIDs like Schema.calculateSchemaDigest's.
func schemaUUID(v int) string {
	if v == 0 {
		return schemaVersion
	}
	key := fmt.Sprintf("schema:%d", v)
	return uuidFrom(hash64("hi:"+key), hash64("lo:"+key), 3)
}
