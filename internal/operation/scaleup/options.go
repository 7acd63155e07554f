package scaleup

// Options are a scale-up's own part of the request (pkg/operation.Request.Ext): the
// scale command binds them (internal/operation/scaledown/command.go).
type Options struct {
	// Cleanup: run nodetool cleanup on the pre-existing nodes afterwards (--cleanup).
	Cleanup bool
}
