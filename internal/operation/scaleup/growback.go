package scaleup

import (
	puboperation "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// GrowRequest is the scale-up that grows every rack of datacenter dc to nodes: abort
// --grow-back plans with it the end of an operation that left the racks at sizes the
// operator cannot keep (internal/operation/lifecycle, growback.go).
func (Kind) GrowRequest(dc string, nodes int) puboperation.Request {
	return puboperation.Request{DC: dc, Nodes: nodes}
}
