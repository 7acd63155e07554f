package sim

import (
	"fmt"
	"strings"
)

// The startup errors of a replacement and the log lines around them, per version
// (docs/how-it-works/replace.md §4.2, §4.3; read from StorageService.java (SS),
// dht/RangeStreamer.java (RS) and CassandraDaemon.java (CD) at the refs of
// docs/how-it-works/nodetool.md §0: 3.11.18, 4.0.13, 4.1.6, 5.0.3). Line numbers are those
// refs' and only decorate the log; the messages are exact.

// perVersion holds one value for 3.11, 4.0, 4.1 and 5.0.
type perVersion [4]string

func (p perVersion) of(o Options) string {
	return p[map[string]int{V311: 0, V40: 1, V41: 2, V50: 3}[o.Version]]
}

func lines(file string, l311, l40, l41, l50 int) perVersion {
	f := func(l int) string { return fmt.Sprintf("%s:%d", file, l) }
	return perVersion{f(l311), f(l40), f(l41), f(l50)}
}

// startupRule is one startup failure: the exception CassandraDaemon prints (stdout
// "Exception (<class>) encountered during startup: <msg>", exit 3) and the frame that
// throws it, per version.
type startupRule struct {
	id    string // R1…R11 of replace.md §4.2, or a name
	class string
	frame perVersion // "org.apache.cassandra.…method(File.java:line)"
}

// frames names the throwing method (m311 on 3.11, m4 from 4.0) in file at each line.
func frames(pkg, m311, m4, file string, l311, l40, l41, l50 int) perVersion {
	f := func(m string, l int) string { return fmt.Sprintf("org.apache.cassandra.%s.%s(%s:%d)", pkg, m, file, l) }
	return perVersion{f(m311, l311), f(m4, l40), f(m4, l41), f(m4, l50)}
}

// The rules the simulator checks. Each message is built by the function next to it.
var (
	// R1: plain replace_address on a node whose system.local says COMPLETED.
	ruleR1 = startupRule{"R1", "java.lang.RuntimeException",
		frames("service", "StorageService.prepareForReplacement", "StorageService.prepareForReplacement", "StorageService.java", 669, 641, 641, 733)}
	// R3: the node would not bootstrap (auto_bootstrap: false, or a seed since
	// CASSANDRA-14463, 3.11.11/4.0.1: shouldBootstrap()).
	ruleR3 = startupRule{"R3", "java.lang.RuntimeException",
		frames("service", "StorageService.prepareForReplacement", "StorageService.prepareForReplacement", "StorageService.java", 675, 647, 647, 739)}
	// R4: the shadow round does not know the address.
	ruleR4 = startupRule{"R4", "java.lang.RuntimeException",
		frames("service", "StorageService.prepareForReplacement", "StorageService.prepareForReplacement", "StorageService.java", 685, 658, 658, 750)}
	// R7: another node bootstraps, leaves or moves (cassandra.consistent.rangemovement);
	// 3.11 checks in joinTokenRing, 4.0+ in prepareForBootstrap.
	ruleR7 = startupRule{"R7", "java.lang.UnsupportedOperationException",
		frames("service", "StorageService.joinTokenRing", "StorageService.prepareForBootstrap", "StorageService.java", 1121, 1799, 1916, 2059)}
	// R8: the replaced node is alive, or its gossip changed within RING_DELAY.
	ruleR8 = startupRule{"R8", "java.lang.UnsupportedOperationException",
		frames("service", "StorageService.joinTokenRing", "StorageService.prepareForBootstrap", "StorageService.java", 1158, 1836, 1953, 2112)}
	// R9: a token of the replaced node has no owner (it left or was removed).
	ruleR9 = startupRule{"R9", "java.lang.UnsupportedOperationException",
		frames("service", "StorageService.joinTokenRing", "StorageService.prepareForBootstrap", "StorageService.java", 1163, 1841, 1958, 2118)}
	// R11: a range has no live source replica (RF > 1).
	ruleR11 = startupRule{"R11", "java.lang.IllegalStateException",
		frames("dht", "RangeStreamer.getRangeFetchMap", "RangeStreamer.calculateRangesToFetchWithPreferredEndpoints", "RangeStreamer.java", 351, 558, 558, 586)}
	// collision: a fresh node without a replace flag on a known address.
	ruleCollision = startupRule{"collision", "java.lang.RuntimeException",
		frames("service", "StorageService.checkForEndpointCollision", "StorageService.checkForEndpointCollision", "StorageService.java", 731, 784, 784, 876)}
	// resume (5.0, CASSANDRA-17679): earlier streamed ranges without
	// cassandra.reset_bootstrap_progress.
	ruleResume = startupRule{"resume", "java.lang.IllegalStateException",
		perVersion{3: "org.apache.cassandra.dht.RangeStreamer.fetchAsync(RangeStreamer.java:744)"}}
)

// endpointString is InetAddress.toString() (3.11) or InetAddressAndPort.toString() (4.0+)
// of an IP literal: "/10.244.3.9" or "/10.244.3.9:7000".
func endpointString(o Options, addr string) string {
	if o.is311() {
		return "/" + addr
	}
	return "/" + addr + ":" + storagePort
}

func msgR1() string { return "Cannot replace address with a node that is already bootstrapped" }

func msgR3() string {
	return "Replacing a node without bootstrapping risks invalidating consistency guarantees as the expected data may not be present until repair is run. To perform this operation, please restart with -Dcassandra.allow_unsafe_replace=true"
}

func msgR4(o Options, addr string) string {
	return fmt.Sprintf("Cannot replace_address %s because it doesn't exist in gossip", endpointString(o, addr))
}

// msgR7 lists the endpoints joined by ',' (StringUtils.join of the bootstrap tokens'
// endpoints, the leaving endpoints, the moving ones); 5.0 names the property by its key.
func msgR7(o Options, joining, leaving []string) string {
	prop := "cassandra.consistent.rangemovement"
	return fmt.Sprintf("Other bootstrapping/leaving/moving nodes detected, cannot bootstrap while %s is true. Nodes detected, bootstrapping: %s; leaving: %s; moving: ;",
		prop, strings.Join(joining, ","), strings.Join(leaving, ","))
}

func msgR8() string { return "Cannot replace a live node... " } // the trailing space is Cassandra's

func msgR9(token string) string { return "Cannot replace token " + token + " which does not exist!" }

// msgR11 names the range the way each version prints it: a Range on 3.11, the local
// Replica ("Full(<endpoint>,<range>)") from 4.0.
func msgR11(o Options, self, rng, keyspace string) string {
	what := rng
	if !o.is311() {
		what = "Full(" + endpointString(o, self) + "," + rng + ")"
	}
	return "Unable to find sufficient sources for streaming range " + what + " in keyspace " + keyspace
}

func msgCollision(o Options, addr string) string {
	return fmt.Sprintf("A node with address %s already exists, cancelling join. Use cassandra.replace_address if you want to replace this node.", endpointString(o, addr))
}

func msgResume(o Options, self, source, rng string) string {
	local := "Full(" + endpointString(o, self) + "," + rng + ")"
	remote := "Full(" + endpointString(o, source) + "," + rng + ")"
	return "Discovered existing bootstrap data and cassandra.reset_bootstrap_progress is not configured; aborting bootstrap. Please clean up local files manually and try again or set cassandra.reset_bootstrap_progress=true to ignore. " +
		"Found: [FetchReplica{local=" + local + ", remote=" + remote + "}]. Fully available: [" + rng + "]. Transiently available: []"
}

// Log lines (SS unless named): the INFO and WARN lines a replacement prints on its
// console, by the line of the logger call.
var (
	srcGather        = lines("StorageService.java", 681, 653, 653, 745)
	srcFirstBootDone = lines("StorageService.java", 901, 981, 999, 1101)
	srcSameAddress   = lines("StorageService.java", 970, 1048, 1065, 1171)
	srcRetrying      = lines("StorageService.java", 1099, 1777, 1894, 2037)
	srcSetMode       = lines("StorageService.java", 1670, 1767, 1884, 2027)
	srcSleeping50    = perVersion{3: "StorageService.java:2088"}
	srcUnable50      = perVersion{3: "StorageService.java:2110"}
	srcReset         = lines("StorageService.java", 1712, 1903, 2020, 2180)
	srcBootstrapDone = lines("StorageService.java", 1727, 1918, 2036, 2196)
	srcBootstrapErr  = lines("StorageService.java", 1732, 1923, 2041, 2201)
	srcStreamFailed  = lines("StorageService.java", 1218, 1217, 1221, 1327)
	srcRF1           = lines("RangeStreamer.java", 347, 551, 551, 579)
	srcResumeErr     = perVersion{3: "RangeStreamer.java:743"}
	srcStartupErr    = lines("CassandraDaemon.java", 659, 788, 773, 756)
)

func msgFirstBootDone(o Options) string {
	if o.is50() {
		return "Replace address on the first boot requested; this node is already bootstrapped"
	}
	return "Replace address on first boot requested; this node is already bootstrapped"
}

func msgSameAddress(o Options, addr string) string {
	window := "max_hint_window_in_ms"
	if o.is50() {
		window = "max_hint_window"
	}
	return fmt.Sprintf("Writes will not be forwarded to this node during replacement because it has the same address as the node to be replaced (%s). If the previous node has been down for longer than %s, repair must be run after the replacement process in order to make this node consistent.", endpointString(o, addr), window)
}

// msgStreamFailed ends with the bootstrap state, which the dtest matches
// ("Some data streaming failed.*IN_PROGRESS$").
func msgStreamFailed() string {
	return "Some data streaming failed. Use nodetool to check bootstrap state and resume. For more, see `nodetool help bootstrap`. IN_PROGRESS"
}

func msgRF1(o Options, self, rng, keyspace string) string {
	what := rng
	if !o.is311() {
		what = "Full(" + endpointString(o, self) + "," + rng + ")"
	}
	return "Unable to find sufficient sources for streaming range " + what + " in keyspace " + keyspace + " with RF=1. Keyspace might be missing data."
}

// tokenList is Collection.toString() of tokens: "[t1, t2]".
func tokenList(toks []string) string { return "[" + strings.Join(toks, ", ") + "]" }
