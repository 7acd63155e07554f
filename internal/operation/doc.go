// Package operation is what every kind of operation shares on the plugin's side: the
// Registry the CLI looks kinds up in (registry.go), the Planner and its reads
// (planner.go, reads.go, racks.go, readahead.go), what a plan says besides its steps
// (warnings.go), the Toolkit it is to every kind (toolkit.go), the preflight checks and
// the access a plan needs (preflight.go), the driven scales' target (driven.go), and the
// Runner that runs or resumes a checkpoint through the engine (run.go). The Kind
// contract is pkg/operation's. Each of the plugin's own kinds is one package below
// (scaledown, scaleup, restart, replacenode, adddc, removedc; dcread is what the
// datacenter kinds read); internal/operation/kinds is their table, and
// internal/operation/lifecycle starts, resumes, aborts and reaps them through the
// contract. A new kind is a new package implementing pkg/operation's Kind, plus one line
// in the table.
package operation
