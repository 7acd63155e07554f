package checkpoint

import (
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestStreamThroughputRecord: the streamThroughput record goes through the annotation
// and back as it was; a checkpoint written before it existed decodes without one.
func TestStreamThroughputRecord(t *testing.T) {
	cp := sample(2)
	cp.Throughput = &record.StreamThroughput{Rate: record.Rate{Value: 200, Unit: "MiB/s"}, Version: "4.1.6", Loads: map[string]int64{"c-dc1-r1-2": 1 << 30},
		Recorded: []record.RecordedThroughput{{Pod: "c-dc1-r1-2", Version: "4.1.6", At: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC),
			Limiters: map[string]record.Rate{"stream": {Value: 24, Unit: "MiB/s"}, "entire-sstable": {Unlimited: true}}}}}
	s, err := Encode(cp, testKinds)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(s, "uid", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Throughput, cp.Throughput) {
		t.Errorf("decoded %+v, want %+v", got.Throughput, cp.Throughput)
	}
	if r, ok := got.Throughput.RecordOf("c-dc1-r1-2"); !ok || !r.Limiters["entire-sstable"].Unlimited {
		t.Errorf("record %+v", r)
	}

	old, err := os.ReadFile("testdata/v1-scale-down.json")
	if err != nil {
		t.Fatal(err)
	}
	v1, err := Decode(string(old), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if v1.Throughput != nil {
		t.Errorf("a schema 1 checkpoint has a streamThroughput: %+v", v1.Throughput)
	}
	if _, ok := v1.Throughput.RecordOf("any"); ok {
		t.Error("no record without a streamThroughput")
	}
}
