package checkpoint

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func sample(n int) *record.Checkpoint {
	cp := &record.Checkpoint{SchemaVersion: newestPlain, OperationID: "op", Kind: KindScaleDown, Namespace: "ns", Cluster: "c", ClusterUID: "uid",
		Target: record.Target{DC: "dc1", Racks: []string{"r1"}, Nodes: 1, From: map[string]int{"r1": n + 1}}}
	for i := n; i >= 1; i-- {
		pod := fmt.Sprintf("c-dc1-r1-%d", i)
		cp.Nodes = append(cp.Nodes, record.Node{Pod: pod, PodUID: "u" + pod, Ordinal: i, DC: "dc1", Rack: "r1", StatefulSet: "c-dc1-r1",
			HostID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), PVCs: []record.PVC{{Name: "data-" + pod, UID: "p" + pod}}})
	}
	cp.Steps = scaleDownSteps(cp.Nodes, false)
	return cp
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	cp := sample(3)
	s, err := Encode(cp, testKinds)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(s, "uid", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Steps) != 16 || got.Steps[0].ID != "decommission/c-dc1-r1-3" || got.Steps[15].ID != StepUpdateCluster {
		t.Fatalf("steps: %+v", got.Steps)
	}
	if _, err := Decode(s, "other", testKinds); !errors.Is(err, ErrOtherCluster) {
		t.Fatalf("other UID: %v", err)
	}
	for _, bad := range []string{"", "{", `{"schemaVersion":0}`, `{"schemaVersion":1}`, s[:len(s)-10], `[]`} {
		if _, err := Decode(bad, "", testKinds); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v, want ErrCorrupt", bad, err)
		}
	}
	if _, err := Decode(`{"schemaVersion":4,"whatever":true}`, "", testKinds); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("newer: %v", err)
	}
}

// A large plan is written compressed in a schema 3 envelope (an older build, which
// reads up to 2, asks for an upgrade); a small one stays plain JSON.
func TestLargeCheckpointCompressed(t *testing.T) {
	small, err := Encode(sample(10), testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(small, `{"schemaVersion":2,`) {
		t.Fatalf("10 nodes: %.60s…, want plain JSON", small)
	}
	plain, _ := json.Marshal(sample(100))
	big, err := Encode(sample(100), testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(big, `{"schemaVersion":3,"encoding":"gzip+base64","data":"`) || len(big)*4 > len(plain) {
		t.Fatalf("100 nodes: %d bytes (plain %d), %.60s…; want a compressed envelope under a quarter", len(big), len(plain), big)
	}
	cp, err := Decode(big, "uid", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(cp)
	if string(again) != string(plain) {
		t.Fatal("the envelope does not give back the checkpoint")
	}
	inner, err := Unwrap(big)
	if err != nil || inner != string(plain) {
		t.Fatalf("Unwrap: %v", err)
	}
	if u, _ := Unwrap(small); u != small {
		t.Fatal("Unwrap changed a plain checkpoint")
	}
	env := func(enc, data string) string {
		b, _ := json.Marshal(envelope{SchemaVersion: 3, Encoding: enc, Data: data})
		return string(b)
	}
	var inside struct{ Data string }
	_ = json.Unmarshal([]byte(big), &inside)
	nested := env(EncodingGzip, gz(t, big))
	for name, bad := range map[string]string{
		"unknown encoding":   env("zstd", inside.Data),
		"not base64":         env(EncodingGzip, "%%%"),
		"not gzip":           env(EncodingGzip, "aGVsbG8="),
		"truncated":          env(EncodingGzip, inside.Data[:len(inside.Data)/2]),
		"envelope in one":    nested,
		"plain with schema3": strings.Replace(small, `"schemaVersion":2`, `"schemaVersion":3`, 1),
	} {
		if _, err := Decode(bad, "", testKinds); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

func gz(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func TestScaleDownStepsWithPause(t *testing.T) {
	steps := scaleDownSteps(sample(1).Nodes, true)
	if steps[0].Kind != record.StepPauseOperator || steps[len(steps)-1].Kind != record.StepResumeOperator || steps[len(steps)-2].Kind != StepUpdateCluster {
		t.Fatalf("%+v", steps)
	}
}

// memObject is an annotated object with resourceVersion semantics.
type memObject struct {
	ann     map[string]string
	rv      int
	uid     string
	onPatch func(m *memObject) // runs before a patch is applied (a concurrent writer)
}

func (m *memObject) ReadAnnotations(context.Context) (map[string]string, string, string, error) {
	c := map[string]string{}
	for k, v := range m.ann {
		c[k] = v
	}
	return c, m.uid, fmt.Sprint(m.rv), nil
}

func (m *memObject) PatchAnnotations(_ context.Context, rv string, set map[string]*string) (string, error) {
	if f := m.onPatch; f != nil {
		m.onPatch = nil
		f(m)
	}
	if rv != "" && rv != fmt.Sprint(m.rv) {
		return "", apierrors.NewConflict(schema.GroupResource{Resource: "cassandraclusters"}, "c", errors.New("modified"))
	}
	for k, v := range set {
		if v == nil {
			delete(m.ann, k)
		} else {
			m.ann[k] = *v
		}
	}
	m.rv++
	return fmt.Sprint(m.rv), nil
}

func TestStoreConflicts(t *testing.T) {
	ctx := context.Background()
	obj := &memObject{ann: map[string]string{}, rv: 1, uid: "uid"}
	st := &Store{Obj: obj, Kinds: testKinds}
	if cp, err := st.Load(ctx); cp != nil || err != nil {
		t.Fatal(cp, err)
	}
	cp := sample(1)
	if err := st.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}
	// Someone else (the operator) writes the object: our next save retries on the new
	// resourceVersion because the checkpoint is still ours.
	obj.onPatch = func(m *memObject) { m.ann["other"] = "x"; m.rv++ }
	cp.Steps[0].State = record.StateStarted
	if err := st.Save(ctx, cp); err != nil {
		t.Fatalf("save after a foreign write: %v", err)
	}
	// Someone else changes the checkpoint itself: the save fails with ErrLost.
	obj.onPatch = func(m *memObject) {
		other := sample(1)
		other.OperationID, other.Seq = "theirs", 9
		v, _ := Encode(other, testKinds)
		m.ann[Annotation] = v
		m.rv++
	}
	if err := st.Save(ctx, cp); !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "theirs") {
		t.Fatalf("save after a foreign checkpoint: %v", err)
	}
	// A second Create on an object that has a checkpoint: ErrExists.
	st2 := &Store{Obj: obj, Kinds: testKinds}
	if err := st2.Create(ctx, sample(1)); !errors.Is(err, ErrExists) {
		t.Fatalf("create over an existing checkpoint: %v", err)
	}
}

func TestLock(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	alive := func(h record.Holder) bool { return h.PID == 7 }
	me := record.Holder{Host: "h1", PID: 9, Session: "me"}
	cp := sample(1)
	cp.UpdatedAt = now.Add(-10 * time.Second)
	cases := []struct {
		holder record.Holder
		want   LockState
	}{
		{record.Holder{Host: "h1", PID: 9, Session: "me"}, Mine},
		{record.Holder{Host: "h1", PID: 7, Session: "x"}, HeldHere},
		{record.Holder{Host: "h1", PID: 8, Session: "x"}, Free},
		{record.Holder{Host: "h2", PID: 7, Session: "x", LeaseSeconds: 60}, HeldElsewhere},
		// Its timestamps say the lease expired, but they are another machine's clock:
		// only a lease of unchanged record on ours frees it (internal/cli acquire).
		{record.Holder{Host: "h2", PID: 7, Session: "x", LeaseSeconds: 5}, HeldElsewhere},
		{record.Holder{Host: "h1", PID: 7, Session: "x", ReleasedAt: &now}, Free},
	}
	for i, c := range cases {
		cp.Holder = c.holder
		if got, _, _ := Lock(cp, me, now, alive); got != c.want {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
	cp.Holder = record.Holder{Host: "h2", PID: 1, Session: "x"}
	cp.TakeOver(me, now, "test")
	if len(cp.Takeovers) != 1 || cp.Holder.Session != "me" || cp.Takeovers[0].From.Host != "h2" {
		t.Fatalf("%+v", cp)
	}
}

func BenchmarkEncode100(b *testing.B) {
	cp := sample(100)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Encode(cp, testKinds); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode100(b *testing.B) {
	s, _ := Encode(sample(100), testKinds)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(s, "uid", testKinds); err != nil {
			b.Fatal(err)
		}
	}
}

// A never-started node (Node.Unstarted) has no Host ID, is no new node, and needs schema
// 2: a plugin that reads only schema 1 must not take it for a node to decommission.
func TestUnstartedNodeValidated(t *testing.T) {
	ok := sample(1)
	ok.Nodes[0].HostID, ok.Nodes[0].Unstarted = "", true
	if err := Validate(ok, "", testKinds); err != nil {
		t.Fatalf("valid: %v", err)
	}
	for name, change := range map[string]func(cp *record.Checkpoint){
		"with a Host ID": func(cp *record.Checkpoint) { cp.Nodes[0].HostID = "h" },
		"schema 1":       func(cp *record.Checkpoint) { cp.SchemaVersion = 1 },
	} {
		cp := sample(1)
		cp.Nodes[0].HostID, cp.Nodes[0].Unstarted = "", true
		change(cp)
		if err := Validate(cp, "", testKinds); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "never started") {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// fencedObject is a memObject that also writes fenced by content (record.ContentFenced),
// as the API server applies a JSON patch's tests: against the object as it is when it
// writes. It counts each kind of write.
type fencedObject struct {
	memObject
	fenced, byRV int
}

func (m *fencedObject) PatchAnnotationsIf(_ context.Context, uid, key, want string, set map[string]*string) (string, error) {
	m.fenced++
	if f := m.onPatch; f != nil {
		m.onPatch = nil
		f(&m.memObject)
	}
	if cur, ok := m.ann[key]; uid != m.uid || !ok || cur != want {
		return "", fmt.Errorf("%w: test failed", record.ErrContentChanged)
	}
	for k, v := range set {
		if v == nil {
			delete(m.ann, k)
		} else {
			m.ann[k] = *v
		}
	}
	m.rv++
	return fmt.Sprint(m.rv), nil
}

func (m *fencedObject) PatchAnnotations(ctx context.Context, rv string, set map[string]*string) (string, error) {
	m.byRV++
	return m.memObject.PatchAnnotations(ctx, rv, set)
}

// The operator's status write between this run's read and its write costs no retry
// when the Object writes fenced by content; a changed checkpoint is still refused, by
// the same judgement as on a conflict (ErrLost, ErrRemoved), and nothing is written.
func TestContentFencedWrites(t *testing.T) {
	ctx := context.Background()
	statusWrite := func(m *memObject) { m.ann["status"] = "x"; m.rv++ }
	obj := &fencedObject{memObject: memObject{ann: map[string]string{}, rv: 1, uid: "uid"}}
	st := &Store{Obj: obj, Kinds: testKinds}
	cp := sample(1)
	if err := st.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}
	obj.onPatch = statusWrite
	cp.Steps[0].State = record.StateStarted
	if err := st.Save(ctx, cp); err != nil || obj.fenced != 1 || obj.byRV != 1 {
		t.Fatalf("save after a status write: %v; fenced writes %d, by resourceVersion %d (the create)", err, obj.fenced, obj.byRV)
	}
	obj.onPatch = statusWrite
	if err := st.Finish(ctx, cp, LastOperation{OperationID: cp.OperationID}); err != nil || obj.fenced != 2 || obj.byRV != 1 {
		t.Fatalf("clear after a status write: %v; fenced writes %d, by resourceVersion %d", err, obj.fenced, obj.byRV)
	}
	if _, ok := obj.ann[Annotation]; ok || obj.ann[LastOperationAnnotation] == "" || obj.ann["status"] != "x" {
		t.Fatalf("after the clear: %v", obj.ann)
	}

	// Another run takes the checkpoint over before the clear: refused, nothing written.
	obj = &fencedObject{memObject: memObject{ann: map[string]string{}, rv: 1, uid: "uid"}}
	st = &Store{Obj: obj, Kinds: testKinds}
	cp = sample(1)
	cp.Holder.Session = "mine"
	if err := st.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}
	obj.onPatch = func(m *memObject) {
		other := sample(1)
		other.Seq, other.Holder.Session = 2, "theirs"
		v, _ := Encode(other, testKinds)
		m.ann[Annotation] = v
		m.rv++
	}
	err := st.Finish(ctx, cp, LastOperation{OperationID: cp.OperationID})
	if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "theirs") {
		t.Fatalf("clear over a taken-over checkpoint: %v", err)
	}
	if _, ok := obj.ann[LastOperationAnnotation]; ok || obj.ann[Annotation] == "" {
		t.Fatalf("a refused clear wrote: %v", obj.ann)
	}

	// Removed by hand before the clear: ErrRemoved, as on a conflict.
	obj.onPatch = nil
	obj.ann = map[string]string{}
	st2 := &Store{Obj: obj, Kinds: testKinds}
	cp2 := sample(1)
	if err := st2.Create(ctx, cp2); err != nil {
		t.Fatal(err)
	}
	obj.onPatch = func(m *memObject) { delete(m.ann, Annotation); m.rv++ }
	if err := st2.Finish(ctx, cp2, LastOperation{}); !errors.Is(err, ErrRemoved) {
		t.Fatalf("clear of a removed checkpoint: %v", err)
	}
	if _, ok := obj.ann[LastOperationAnnotation]; ok {
		t.Fatalf("a refused clear wrote: %v", obj.ann)
	}

	// The resource deleted and re-created under the same name, checkpoint and all.
	st3 := &Store{Obj: obj, Kinds: testKinds}
	cp3 := sample(1)
	if err := st3.Create(ctx, cp3); err != nil {
		t.Fatal(err)
	}
	obj.onPatch = func(m *memObject) { m.uid = "uid2"; m.rv++ }
	if err := st3.Save(ctx, cp3); !errors.Is(err, ErrLost) {
		t.Fatalf("save on a re-created resource: %v", err)
	}
}

// countingObject counts the reads of a memObject.
type countingObject struct {
	*memObject
	reads int
}

func (c *countingObject) ReadAnnotations(ctx context.Context) (map[string]string, string, string, error) {
	c.reads++
	return c.memObject.ReadAnnotations(ctx)
}

// TestLoadAsOpened: the command's first read (Seed) answers LoadAsOpened once, with no
// read of its own; a later Load or LoadAsOpened reads. A checkpoint written by someone
// else after the seeded read is not missed: the create tests the seeded resourceVersion,
// reads again on the conflict, and refuses (ErrExists).
func TestLoadAsOpened(t *testing.T) {
	ctx := context.Background()
	obj := &countingObject{memObject: &memObject{ann: map[string]string{}, rv: 1, uid: "uid"}}
	st := &Store{Obj: obj, Kinds: testKinds}
	ann, uid, rv, _ := obj.memObject.ReadAnnotations(ctx)
	st.Seed(ann, uid, rv)
	if cp, err := st.LoadAsOpened(ctx); cp != nil || err != nil || obj.reads != 0 {
		t.Fatalf("seeded load: %v, %v, %d reads; want no checkpoint, answered without a read", cp, err, obj.reads)
	}
	if _, err := st.LoadAsOpened(ctx); err != nil || obj.reads != 1 {
		t.Fatalf("a second LoadAsOpened: %v, %d reads; want one read", err, obj.reads)
	}
	// Another run's checkpoint lands after the seeded read.
	st = &Store{Obj: obj, Kinds: testKinds}
	st.Seed(ann, uid, rv)
	if cp, err := st.LoadAsOpened(ctx); cp != nil || err != nil {
		t.Fatal(cp, err)
	}
	theirs := sample(1)
	theirs.OperationID = "theirs"
	v, _ := Encode(theirs, testKinds)
	obj.ann[Annotation] = v
	obj.rv++
	if err := st.Create(ctx, sample(1)); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "theirs") {
		t.Fatalf("create after a checkpoint written since the seeded read: %v", err)
	}
}
