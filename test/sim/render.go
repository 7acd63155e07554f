package sim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Constants that real nodes print and that the fixtures of docs/how-it-works/nodetool.md use.
const (
	schemaVersion = "3f0e7a9c-2b1d-3c4e-9f8a-7b6c5d4e3f21"
	storagePort   = "7000"
	nativePort    = "9042"
	// streamTable is the table whose SSTables the simulated streams carry.
	streamTable = "events-5b3a9c1e2f4d11efb0a1c3d4e5f6a7b8"
	// gossipLeftTTL is Gossiper.aVeryLongTime: a LEFT endpoint is evicted after it.
	gossipLeftTTL = 72 * time.Hour
)

const (
	noteMixed = "Non-system keyspaces don't have the same replication settings, effective ownership information is meaningless"
	noteLocal = "Ownership values for keyspaces with LocalStrategy are meaningless"
)

// dcGroup is one datacenter's listed nodes, in ring (spec) order.
type dcGroup struct {
	name  string
	nodes []*node
}

// ringByDC groups the nodes viewer's ring lists by DC, DCs sorted by name (Status uses
// a TreeMap). Within a DC the order is the spec order: stable across calls, like the
// real order (by each node's lowest token) is for a given ring.
func (st *state) ringByDC(viewer *node, now time.Time) []dcGroup {
	idx := map[string]int{}
	var groups []dcGroup
	for _, n := range st.visible(viewer, now) {
		i, ok := idx[n.Spec.DC]
		if !ok {
			i = len(groups)
			idx[n.Spec.DC] = i
			groups = append(groups, dcGroup{name: n.Spec.DC})
		}
		groups[i].nodes = append(groups[i].nodes, n)
	}
	sort.SliceStable(groups, func(a, b int) bool { return groups[a].name < groups[b].name })
	return groups
}

// keyspaceClass says how `status <ks>` treats a keyspace: "nts", "local" or "" (unknown).
func (st *state) keyspaceClass(ks string) string {
	switch k := st.Schema.keyspace(ks); {
	case k == nil:
		return ""
	case k.Class == classLocal:
		return "local"
	}
	return "nts"
}

func (n *node) address(printPort bool) string {
	if printPort {
		return n.Spec.Address + ":" + storagePort
	}
	return n.Spec.Address
}

// renderStatus prints `nodetool status [ks]` in the layout of the version: 3.11's fixed
// printf widths, or 4.0+'s shared TableBuilder with trailing spaces and a blank line
// between DCs.
func (st *state) renderStatus(b *strings.Builder, self *node, inv invocation, ks string, now time.Time) int {
	o := st.Options
	// Effective ownership is computed with one keyspace's settings (§2.3).
	owner, effective := st.Schema.ownershipKeyspace()
	note := ""
	if !effective {
		note = noteMixed
	}
	if ks != "" {
		switch st.keyspaceClass(ks) {
		case "local":
			effective, note = false, noteLocal
		case "nts":
			owner, effective, note = st.Schema.keyspace(ks), true, ""
		default:
			fmt.Fprintf(b, "\nError: The keyspace %s, does not exist\n", ks)
			return ExitUsage
		}
	}
	groups := st.ringByDC(self, now)
	tokens := 0
	for _, g := range groups {
		for _, n := range g.nodes {
			tokens += n.Spec.Tokens
		}
	}
	// Status compares datacenters with tokens, not nodes with tokens (§2.1).
	tokenPerNode := !(len(groups) < tokens)
	ownsHeader := "Owns"
	if effective {
		ownsHeader = "Owns (effective)"
	}
	type row struct{ code, addr, load, tokens, owns, hostID, token, rack string }
	rowsOf := func(g dcGroup) []row {
		var rows []row
		for _, n := range g.nodes {
			code, _ := st.rowCode(self, n, now)
			r := row{
				code:   code,
				addr:   n.address(inv.printPort),
				load:   stringifyFileSize(st.loadOf(n, now)),
				tokens: strconv.Itoa(n.Spec.Tokens),
				owns:   "?",
				hostID: n.Spec.HostID,
				token:  n.Spec.Token,
				rack:   n.Spec.Rack,
			}
			if !n.jvmUp() {
				r.load = "?" // the down node's load is unknown to the peers
			}
			// A replacement is on no normal-token ring yet: no effective ownership (§4.4).
			if effective && n.Repl == nil {
				f := float32(owner.rfIn(g.name)) / float32(len(g.nodes))
				r.owns = percentOneDecimal(min(f, 1))
			}
			rows = append(rows, r)
		}
		return rows
	}
	dcHeader := func(name string) {
		h := "Datacenter: " + name
		b.WriteString(h + "\n" + strings.Repeat("=", len(h)) + "\n")
		b.WriteString("Status=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n")
	}
	if o.is311() {
		maxAddr := 0
		for _, g := range groups {
			for _, n := range g.nodes {
				maxAddr = max(maxAddr, len(n.address(false)))
			}
		}
		line := func(r row) {
			s := r.code + "  " + padRight(r.addr, maxAddr) + "  " + padRight(r.load, 9) + "  "
			if !tokenPerNode {
				s += padRight(r.tokens, 11) + "  "
			}
			if effective {
				s += padRight(r.owns, 16) + "  "
			} else {
				s += padRight(r.owns, 6) + "  "
			}
			s += padRight(r.hostID, 36) + "  "
			if tokenPerNode {
				s += padRight(r.token, 39) + "  "
			}
			b.WriteString(s + r.rack + "\n")
		}
		for _, g := range groups {
			dcHeader(g.name)
			line(row{code: "--", addr: "Address", load: "Load", tokens: "Tokens", owns: ownsHeader, hostID: "Host ID", token: "Token", rack: "Rack"})
			for _, r := range rowsOf(g) {
				line(r)
			}
		}
	} else {
		tb := &tableBuilder{delim: "  "}
		cells := func(r row) []string {
			if tokenPerNode {
				return []string{r.code, r.addr, r.load, r.owns, r.hostID, r.token, r.rack}
			}
			return []string{r.code, r.addr, r.load, r.tokens, r.owns, r.hostID, r.rack}
		}
		for _, g := range groups {
			t := tb.next()
			tb.add(t, cells(row{code: "--", addr: "Address", load: "Load", tokens: "Tokens", owns: ownsHeader, hostID: "Host ID", token: "Token", rack: "Rack"})...)
			for _, r := range rowsOf(g) {
				tb.add(t, cells(r)...)
			}
		}
		for i, g := range groups {
			if i > 0 {
				b.WriteString("\n")
			}
			dcHeader(g.name)
			tb.print(b, i)
		}
	}
	b.WriteString("\n")
	if note != "" {
		b.WriteString("Note: " + note + "\n")
	}
	return ExitOK
}

// garbleStatus keeps the header of a real rendering and breaks it in the middle of the
// first row, followed by bytes no parser should accept: what a torn exec stream or a
// corrupted terminal looks like.
func garbleStatus(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if len(l) > 4 && strings.ContainsAny(l[:1], "UD?") && strings.ContainsAny(l[1:2], "NLJM") && l[2:4] == "  " {
			b.WriteString(l[:len(l)/2])
			b.WriteString("\x00\xff\xfe\x1b[K\xc3(\n")
			return b.String()
		}
		b.WriteString(l)
	}
	b.WriteString("\xff\xfe\x00\n")
	return b.String()
}

// garbledNetstats has no readable "Mode: " line.
const garbledNetstats = "Mo\x00de:\xff\xfe NORM\x1b[K\n\xc3(Unbootst"

// streamTarget is the peer a leaving node streams to: the first other live, non-leaving
// node of its DC (falling back to any other listed node).
func (st *state) streamTarget(n *node) *node {
	var fallback *node
	for _, p := range st.Nodes {
		if p == n || !p.listed() || p.Detached || p.Repl != nil {
			continue
		}
		if p.Spec.DC == n.Spec.DC && !p.Leaving && !p.Joining && p.jvmUp() && !p.down() {
			return p
		}
		if fallback == nil {
			fallback = p
		}
	}
	return fallback
}

// renderNetstats prints `nodetool netstats [-H]` on self: the mode, the stream plans it
// lists (render_streams.go), then the statistics section (skipped while STARTING).
func (st *state) renderNetstats(b *strings.Builder, self *node, inv invocation, now time.Time) {
	b.WriteString("Mode: " + st.shownMode(self) + "\n")
	if st.writePlans(b, self, inv, now) == 0 {
		b.WriteString("Not sending any streams.\n")
	}
	if self.Mode == ModeStarting {
		return
	}
	b.WriteString("Read Repair Statistics:\nAttempted: 0\nMismatch (Blocking): 0\nMismatch (Background): 0\n")
	pool := func(a, b2, c, d, e string) {
		b.WriteString(padRight(a, 25) + padLeft(b2, 10) + padLeft(c, 10) + padLeft(d, 15) + padLeft(e, 10) + "\n")
	}
	pool("Pool Name", "Active", "Pending", "Completed", "Dropped")
	pool("Large messages", "n/a", "0", "0", "0")
	pool("Small messages", "n/a", "0", "184233", "0")
	pool("Gossip messages", "n/a", "0", "96512", "0")
}

// tokensOf lists the node's tokens, sorted like TokenMetadata returns them. The first
// token of the spec is one of them; the rest are derived from the host ID.
func (n *node) tokensOf() []string {
	first, _ := strconv.ParseInt(n.Spec.Token, 10, 64)
	toks := []int64{first}
	seed := hash64("tokens:" + n.tokenSeed())
	for i := 1; i < n.Spec.Tokens; i++ {
		seed = splitmix64(seed)
		toks = append(toks, int64(seed))
	}
	sort.Slice(toks, func(a, b int) bool { return toks[a] < toks[b] })
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = strconv.FormatInt(t, 10)
	}
	return out
}

// renderInfo prints `nodetool info [-T]`: the "%-23s: %s" lines of the version (§4).
func (st *state) renderInfo(b *strings.Builder, n *node, inv invocation, now time.Time) {
	o := st.Options
	line := func(k, v string) { b.WriteString(padRight(k, 23) + ": " + v + "\n") }
	// Gossip, messaging and native transport stop at the very end of a decommission.
	up := n.Mode != ModeDecommissioned
	line("ID", n.Spec.HostID)
	line("Gossip active", strconv.FormatBool(up))
	if o.is311() {
		line("Thrift active", "false")
	}
	// A replacement starts native transport only once it has joined.
	line("Native Transport active", strconv.FormatBool(up && n.Repl == nil))
	load := st.loadOf(n, now)
	line("Load", stringifyFileSize(load))
	if o.is50() {
		ratio := 1.0
		if n.Spec.UncompressedLoad != "" {
			l, _ := parseSize(n.Spec.Load)
			u, _ := parseSize(n.Spec.UncompressedLoad)
			if l > 0 {
				ratio = u / l
			}
		}
		line("Uncompressed load", stringifyFileSize(load*ratio))
	}
	gen := "0"
	if up {
		gen = strconv.FormatInt(n.StartedAt.Unix(), 10)
	}
	line("Generation No", gen)
	line("Uptime (seconds)", strconv.FormatInt(int64(now.Sub(n.StartedAt)/time.Second), 10))
	line("Heap Memory (MB)", "1024.50 / 4012.00")
	line("Off Heap Memory (MB)", "12.34")
	line("Data Center", n.Spec.DC)
	line("Rack", n.Spec.Rack)
	line("Exceptions", "0")
	line("Key Cache", "entries 1830, size 166.74 KiB, capacity 100 MiB, 4321 hits, 5678 requests, 0.761 recent hit rate, 14400 save period in seconds")
	line("Row Cache", "entries 0, size 0 bytes, capacity 0 bytes, 0 hits, 0 requests, NaN recent hit rate, 0 save period in seconds")
	line("Counter Cache", "entries 0, size 0 bytes, capacity 50 MiB, 0 hits, 0 requests, NaN recent hit rate, 7200 save period in seconds")
	line("Chunk Cache", "entries 28, size 1.75 MiB, capacity 480 MiB, 120 misses, 2456 requests, 0.951 recent hit rate, 0.000 microseconds miss latency")
	if !o.is311() {
		line("Network Cache", "size 8 MiB, overflow size: 0 bytes, capacity 128 MiB")
	}
	line("Percent Repaired", "100.0%")
	switch {
	case !n.member():
		// leaveRing removed the node from its own token metadata (announce window on).
		line("Token", "(node is not joined to the cluster)")
	case n.Spec.Tokens == 1 || inv.allTokens:
		for _, t := range n.tokensOf() {
			line("Token", t)
		}
	default:
		line("Token", fmt.Sprintf("(invoke with -T/--tokens to see all %d tokens)", n.Spec.Tokens))
	}
	if o.is50() {
		line("Bootstrap state", n.bootState())
		line("Bootstrap failed", strconv.FormatBool(n.Mode == ModeJoiningFailed))
		line("Decommissioning", strconv.FormatBool(len(n.running()) > 0))
		line("Decommission failed", strconv.FormatBool(st.shownMode(n) == ModeDecommissionFailed))
	}
}

// renderDescribeCluster prints `nodetool describecluster`: 3.11's short form, or 4.0+'s
// with stats, data centers, database versions and keyspaces.
func (st *state) renderDescribeCluster(b *strings.Builder, self *node, now time.Time) {
	o := st.Options
	var live, down, all []string
	// StorageProxy.describeSchemaVersions asks every live node for its version.
	var versions []string
	byVersion := map[string][]string{}
	leaving, joining := 0, 0
	for _, n := range st.visible(self, now) {
		code, _ := st.rowCode(self, n, now)
		all = append(all, n.Spec.Address+":"+storagePort)
		if code[0] == 'D' {
			down = append(down, n.Spec.Address)
		} else {
			live = append(live, n.Spec.Address)
			v := st.versionOf(n, now)
			if byVersion[v] == nil {
				versions = append(versions, v)
			}
			byVersion[v] = append(byVersion[v], n.Spec.Address)
		}
		switch code[1] {
		case 'L':
			leaving++
		case 'J':
			joining++
		}
	}
	b.WriteString("Cluster Information:\n")
	b.WriteString("\tName: " + o.ClusterName + "\n")
	b.WriteString("\tSnitch: org.apache.cassandra.locator.GossipingPropertyFileSnitch\n")
	b.WriteString("\tDynamicEndPointSnitch: enabled\n")
	b.WriteString("\tPartitioner: org.apache.cassandra.dht.Murmur3Partitioner\n")
	b.WriteString("\tSchema versions:\n")
	// println(String.format("\t\t%s: %s%n", …)) ends each version with a blank line.
	for _, v := range versions {
		fmt.Fprintf(b, "\t\t%s: [%s]\n\n", v, strings.Join(byVersion[v], ", "))
	}
	if len(down) > 0 {
		fmt.Fprintf(b, "\t\tUNREACHABLE: [%s]\n\n", strings.Join(down, ", "))
	}
	if o.is311() {
		return
	}
	b.WriteString("Stats for all nodes:\n")
	fmt.Fprintf(b, "\tLive: %d\n\tJoining: %d\n\tMoving: 0\n\tLeaving: %d\n\tUnreachable: %d\n", len(live), joining, leaving, len(down))
	if _, same := st.Schema.ownershipKeyspace(); !same && !o.is50() {
		b.WriteString("Error: " + noteMixed + "\n")
	}
	b.WriteString("\nData Centers: \n")
	for _, g := range st.ringByDC(self, now) {
		d := 0
		for _, n := range g.nodes {
			if !n.jvmUp() {
				d++
			}
		}
		fmt.Fprintf(b, "\t%s #Nodes: %d #Down: %d\n", g.name, len(g.nodes), d)
	}
	b.WriteString("\nDatabase versions:\n")
	if len(all) > 0 {
		fmt.Fprintf(b, "\t%s: [%s]\n", o.ReleaseVersion, strings.Join(all, ", "))
	}
	b.WriteString("\nKeyspaces:\n")
	// DescribeCluster prints probe.getKeyspaces() (system_auth, system_distributed,
	// system_traces, system_schema, system in the fixtures' order, then user keyspaces).
	ks := func(k *keyspace) {
		b.WriteString("\t" + k.Name + " -> Replication class: " + k.describeReplication() + "\n")
	}
	for _, name := range []string{ksAuth, ksDistributed, ksTraces, ksSchema, ksSystem} {
		ks(st.Schema.keyspace(name))
	}
	for _, k := range st.Schema.user() {
		ks(k)
	}
	if _, same := st.Schema.ownershipKeyspace(); !same && o.is50() {
		b.WriteString("\nNote: " + noteMixed + "\n")
	}
}

// renderGossipInfo prints `nodetool gossipinfo`: one block per endpoint the gossiper
// knows (LEFT and removed ones until evicted after 3 days), application states in
// ordinal order and TOKENS last as <hidden>. Versions are invented but stable. STATUS
// is gossip_status.go's.
func (st *state) renderGossipInfo(b *strings.Builder, now time.Time) {
	o := st.Options
	for _, n := range st.Nodes {
		status, withPort, ok := st.gossipStatus(n, now)
		if !ok {
			continue
		}
		hb := max(0, int64(now.Sub(n.StartedAt)/time.Second))
		sv := 16 + n.StatusVersion
		fmt.Fprintf(b, "/%s\n  generation:%d\n  heartbeat:%d\n", n.Spec.Address, n.StartedAt.Unix(), hb)
		st2 := func(name string, ver int, val string) {
			if val != "" {
				fmt.Fprintf(b, "  %s:%d:%s\n", name, ver, val)
			}
		}
		st2("STATUS", sv, status)
		st2("LOAD", 20+int(hb/60), javaDoubleString(n.LoadBytes))
		st2("SCHEMA", 14+st.Schema.Version, st.versionOf(n, now))
		st2("DC", 8, n.Spec.DC)
		st2("RACK", 10, n.Spec.Rack)
		st2("RELEASE_VERSION", 5, o.ReleaseVersion)
		if n.Removing != "" {
			st2("REMOVAL_COORDINATOR", sv, "REMOVER,"+n.Removing)
		}
		st2("INTERNAL_IP", 7, n.Spec.Address)
		st2("RPC_ADDRESS", 4, n.Spec.Address)
		netVersion := "12"
		if o.is311() {
			netVersion = "11"
		}
		st2("NET_VERSION", 2, netVersion)
		st2("HOST_ID", 3, n.Spec.HostID)
		// Native transport starts once the node has joined.
		st2("RPC_READY", sv+1, strconv.FormatBool(n.Mode != ModeDecommissioned && !n.Gone && n.Repl == nil))
		if !o.is311() {
			st2("INTERNAL_ADDRESS_AND_PORT", 6, n.Spec.Address+":"+storagePort)
			st2("NATIVE_ADDRESS_AND_PORT", 3, n.Spec.Address+":"+nativePort)
			st2("STATUS_WITH_PORT", sv, withPort)
			switch o.Version {
			case V41:
				st2("SSTABLE_VERSIONS", 6, "big-nb")
			case V50:
				st2("SSTABLE_VERSIONS", 6, "big-oa")
			}
		}
		st2("TOKENS", 15, "<hidden>")
	}
}
