package checkpoint

import (
	"encoding/json"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"os"
	"strings"
	"testing"
	"time"
)

// TestProgressFieldKeepsSchema: a step's progress is optional. A schema 1 checkpoint
// with it still encodes as schema 1 (older plugins, whose decoder ignores unknown
// fields, can resume it), round-trips, and a checkpoint without it is written exactly as
// before (no "progress" key).
func TestProgressFieldKeepsSchema(t *testing.T) {
	b, err := os.ReadFile("testdata/v1-scale-down.json")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := Decode(string(b), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Encode(cp, testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, `"progress"`) {
		t.Fatalf("a checkpoint without progress gained the field: %s", plain)
	}
	at := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	p := record.Progress{Operation: "decommission", Pod: cp.Steps[0].Pod, DoneBytes: 41, TotalBytes: 96, Peers: 1, BytesPerSecond: 2.5, ETASeconds: 22, At: at}
	cp.Steps[0].Progress = &p
	s, err := Encode(cp, testKinds)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(s, "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if got.SchemaVersion != 1 {
		t.Fatalf("schema %d, want 1", got.SchemaVersion)
	}
	if got.Steps[0].Progress == nil || *got.Steps[0].Progress != p {
		t.Fatalf("progress: %+v", got.Steps[0].Progress)
	}
	// What an older build decodes into: a step without the field.
	var old struct {
		Steps []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(s), &old); err != nil || old.Steps[0].ID != cp.Steps[0].ID {
		t.Fatalf("older reader: %v %+v", err, old)
	}
	if p.Percent() != 42 || (record.Progress{}).Percent() != 100 {
		t.Fatalf("percent %d", p.Percent())
	}
}
