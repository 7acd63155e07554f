// Package steps is the library of the steps several operation kinds share (decommission,
// shrink, the operator's pause, the tasks, the stream throughput, the driven waits, …;
// internal/operation/* say which kind uses which, as checkpoint step records), and
// build.go turns a checkpoint's records into them (a kind's own steps are built in its
// package: BuildKind). Each step is a small unexported type that keeps in one place the
// checkpoint step kind it implements (kind, for the steps about one node), its wording
// (Describe, PlanText), its answers to "already done?" and "safe now?" from the real
// world (API objects and nodetool, read through World), and the one thing it does. A
// kind's own steps ask World only for the capabilities they use (capabilities.go).
package steps
