package fakeadapter

import (
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Object returns the checkpoint carrier of a cluster: its annotations.
func (a *Adapter) Object(ns, name string) record.Object {
	return &record.Annotations{Client: func() (dynamic.ResourceInterface, error) { return a.client(ns) }, Name: name, FieldManager: FieldManager}
}
