package sim

import (
	"sort"
	"strconv"
	"strings"
)

// ntsOptions turns the replication map of an ALTER KEYSPACE on k into its replicas per
// DC, with the checks Cassandra makes, in their order (AbstractReplicationStrategy
// .validateReplicationStrategy: prepare, construct, validateExpectedOptions,
// validateOptions). It returns the error cqlsh prints instead when one fails.
//
//   - class: NetworkTopologyStrategy by its simple or full name (kept when absent);
//     another class is looked up in org.apache.cassandra.locator and not found
//     ("Unable to find replication strategy class …"; SimpleStrategy is not simulated).
//   - 4.0+ (CASSANDRA-14303, NetworkTopologyStrategy.prepareOptions): replication_factor
//     expands to every valid DC not named (keeping the previous options on ALTER), and
//     DCs with "0" replicas are dropped. 3.11 refuses replication_factor in the
//     constructor ("replication_factor is an option for SimpleStrategy, not
//     NetworkTopologyStrategy").
//   - the constructor parses every value with Integer.valueOf: a NumberFormatException's
//     "For input string: \"x\"", rethrown as a ConfigurationException by createInternal.
//   - 4.0+ validateExpectedOptions: no DC at all is "Configuration for at least one
//     datacenter must be present"; a DC that is not valid (Datacenters
//     .getValidDatacenters: validDCs) is "Unrecognized strategy option {dc} passed to
//     NetworkTopologyStrategy for keyspace k" (CASSANDRA-12681). 3.11's
//     recognizedOptions() is null: any DC name is accepted and kept.
//   - 5.0: system_auth must name every valid DC ("Following datacenters have active
//     nodes and must be present in replication options for keyspace system_auth: [dc]");
//     the 4.x NetworkTopologyStrategy has no such check.
//   - validateOptions: a negative value is "Replication factor must be non-negative;
//     found -1" (validateReplicationFactor).
func (st *state) ntsOptions(n *node, k *keyspace, entries [][2]string) (map[string]int, string) {
	o := st.Options
	opts := map[string]string{}
	for _, e := range entries {
		opts[e[0]] = e[1]
	}
	if class, ok := opts["class"]; ok {
		delete(opts, "class")
		switch strings.TrimPrefix(class, strategyPackage) {
		case classNTS:
		case "SimpleStrategy":
			return nil, "cqlsh-sim: only NetworkTopologyStrategy is simulated"
		default:
			full := class
			if !strings.Contains(class, ".") {
				full = strategyPackage + class
			}
			return nil, configurationError("Unable to find replication strategy class '" + full + "'")
		}
	}
	valid := st.validDCs(n)
	if rf, ok := opts["replication_factor"]; ok {
		if o.is311() {
			return nil, configurationError("replication_factor is an option for SimpleStrategy, not NetworkTopologyStrategy")
		}
		delete(opts, "replication_factor")
		if _, err := javaParseInt(rf); err != nil {
			return nil, configurationError(err.Error())
		}
		// An ALTER keeps the DCs it does not name at their previous replicas.
		for dc, v := range k.RF {
			if _, named := opts[dc]; !named {
				opts[dc] = strconv.Itoa(v)
			}
		}
		for _, dc := range valid {
			if _, named := opts[dc]; !named {
				opts[dc] = rf
			}
		}
	}
	if !o.is311() {
		for dc, v := range opts {
			if v == "0" {
				delete(opts, dc)
			}
		}
	}
	dcs := sortedOptionKeys(opts)
	rf := map[string]int{}
	for _, dc := range dcs {
		v, err := javaParseInt(opts[dc])
		if err != nil {
			return nil, configurationError(err.Error())
		}
		rf[dc] = v
	}
	if !o.is311() {
		if len(dcs) == 0 {
			return nil, configurationError("Configuration for at least one datacenter must be present")
		}
		for _, dc := range dcs {
			if !contains(valid, dc) {
				return nil, configurationError("Unrecognized strategy option {" + dc + "} passed to NetworkTopologyStrategy for keyspace " + k.Name)
			}
		}
	}
	if o.is50() && k.Name == ksAuth {
		var missing []string
		for _, dc := range valid {
			if _, ok := rf[dc]; !ok {
				missing = append(missing, dc)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return nil, configurationError("Following datacenters have active nodes and must be present in replication options for keyspace system_auth: [" + strings.Join(missing, ", ") + "]")
		}
	}
	for _, dc := range dcs {
		if rf[dc] < 0 {
			return nil, configurationError("Replication factor must be non-negative; found " + opts[dc])
		}
	}
	return rf, ""
}

// javaParseInt is Integer.parseInt: an optional sign and decimal digits, within int32;
// its error text is the NumberFormatException's message.
func javaParseInt(s string) (int, error) {
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, numberFormatError(s)
	}
	return int(v), nil
}

type numberFormatError string

func (e numberFormatError) Error() string { return `For input string: "` + string(e) + `"` }
