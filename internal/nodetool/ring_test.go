package nodetool

import (
	"context"
	"errors"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"reflect"
	"testing"
)

type rings map[string]nodetool.Ring

func (r rings) Status(_ context.Context, pod string) (nodetool.Ring, error) {
	if got, ok := r[pod]; ok {
		return got, nil
	}
	return nodetool.Ring{}, errors.New("exec failed")
}

// TestFirstRing: a failed read and an empty ring are skipped, never taken for an answer.
func TestFirstRing(t *testing.T) {
	full := nodetool.Ring{Nodes: []nodetool.Node{{Address: "10.0.0.1"}}}
	ring, i, errs := FirstRing(context.Background(), rings{"b": {}, "c": full}, []string{"a", "b", "c"})
	if i != 2 || !reflect.DeepEqual(ring, full) || errs != nil {
		t.Fatalf("FirstRing = %v, %d, %v", ring, i, errs)
	}
	if _, i, errs := FirstRing(context.Background(), rings{}, []string{"a"}); i != -1 || !reflect.DeepEqual(errs, []string{"from a: exec failed"}) {
		t.Fatalf("none answers: %d, %v", i, errs)
	}
}
