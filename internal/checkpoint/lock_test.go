package checkpoint

import (
	"context"
	"errors"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"strings"
	"testing"
	"time"
)

// takeOverFrom plays another run (host B) that takes the checkpoint over through its own
// store, as resume does: load, TakeOver, Save.
func takeOverFrom(t *testing.T, obj *memObject, by record.Holder) *record.Checkpoint {
	t.Helper()
	st := &Store{Obj: obj, Kinds: testKinds}
	cp, err := st.Load(context.Background())
	if err != nil || cp == nil {
		t.Fatalf("host B cannot load: %v", err)
	}
	cp.TakeOver(by, cp.UpdatedAt, "test")
	if err := st.Save(context.Background(), cp); err != nil {
		t.Fatalf("host B cannot take over: %v", err)
	}
	return cp
}

// TestLostWriteNeverWinsBack is the lost-write sequence of issue 15: host B takes the
// checkpoint over; host A's next write conflicts and fails; A goes on (a best-effort
// write, a lease renewal) and writes again. That write must fail too, whatever seq A now
// holds: the checkpoint stays B's, and A's Seq is the one it last wrote.
func TestLostWriteNeverWinsBack(t *testing.T) {
	ctx := context.Background()
	obj := &memObject{ann: map[string]string{}, rv: 1, uid: "uid"}
	a := &Store{Obj: obj, Kinds: testKinds}
	cp := sample(2)
	cp.Holder = record.Holder{Host: "host-a", PID: 10, Session: "a"}
	if err := a.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}
	if err := a.Save(ctx, cp); err != nil { // seq 2
		t.Fatal(err)
	}
	b := takeOverFrom(t, obj, record.Holder{Host: "host-b", PID: 20, Session: "b"}) // seq 3, held by b
	if b.Seq != 3 {
		t.Fatalf("host B wrote seq %d, want 3", b.Seq)
	}
	err := a.Save(ctx, cp)
	if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "host-b") {
		t.Fatalf("first write after the takeover: %v, want ErrLost naming host-b", err)
	}
	if cp.Seq != 2 {
		t.Fatalf("a failed write left cp.Seq at %d, want 2 (the seq this run last wrote)", cp.Seq)
	}
	for i := 0; i < 3; i++ {
		if err := a.Save(ctx, cp); !errors.Is(err, ErrLost) {
			t.Fatalf("write %d after the takeover: %v, want ErrLost", i+2, err)
		}
	}
	if err := a.Fence(ctx, cp); !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "host-b") {
		t.Fatalf("fence after the takeover: %v, want ErrLost naming host-b", err)
	}
	cur, _ := (&Store{Obj: obj, Kinds: testKinds}).Load(ctx)
	if cur.Holder.Session != "b" || cur.Seq != 3 {
		t.Fatalf("the checkpoint is %s seq %d, want b's seq 3", cur.Holder.Session, cur.Seq)
	}
}

// TestLostWriteSameSeq: the other run's seq happens to equal the one this run wants
// (it took over from an older copy): the holder's session tells them apart.
func TestLostWriteSameSeq(t *testing.T) {
	ctx := context.Background()
	obj := &memObject{ann: map[string]string{}, rv: 1, uid: "uid"}
	a := &Store{Obj: obj, Kinds: testKinds}
	cp := sample(1)
	cp.Holder = record.Holder{Host: "host-a", Session: "a"}
	if err := a.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}
	// B overwrites with the same operation at the same seq 1, but its own session.
	other := sample(1)
	other.Seq = 1
	other.Holder = record.Holder{Host: "host-b", Session: "b"}
	v, _ := Encode(other, testKinds)
	obj.ann[Annotation] = v
	obj.rv++
	if err := a.Save(ctx, cp); !errors.Is(err, ErrLost) {
		t.Fatalf("save over another session at our seq: %v, want ErrLost", err)
	}
	if err := a.Finish(ctx, cp, LastOperation{}); !errors.Is(err, ErrLost) {
		t.Fatalf("finish over another session at our seq: %v, want ErrLost", err)
	}
}

// TestFence: a fence passes while the checkpoint is ours (also after a foreign write to
// the object, whose resourceVersion it then adopts) and fails once it is not.
func TestFence(t *testing.T) {
	ctx := context.Background()
	obj := &memObject{ann: map[string]string{}, rv: 1, uid: "uid"}
	a := &Store{Obj: obj, Kinds: testKinds}
	cp := sample(1)
	cp.Holder = record.Holder{Host: "host-a", Session: "a"}
	if err := a.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}
	if err := a.Fence(ctx, cp); err != nil {
		t.Fatalf("fence on our checkpoint: %v", err)
	}
	obj.ann["other"] = "x"
	obj.rv++
	if err := a.Fence(ctx, cp); err != nil {
		t.Fatalf("fence after a foreign write: %v", err)
	}
	if err := a.Save(ctx, cp); err != nil {
		t.Fatalf("save after the fence adopted the new resourceVersion: %v", err)
	}
	delete(obj.ann, Annotation)
	obj.rv++
	if err := a.Fence(ctx, cp); !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "removed") {
		t.Fatalf("fence on a removed checkpoint: %v", err)
	}
}

// TestLockIdentity: a PID is looked up only on the holder's own machine; a holder with
// our machine and PID but another session is our dead predecessor.
func TestLockIdentity(t *testing.T) {
	now := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	asked := 0
	alive := func(record.Holder) bool { asked++; return true }
	me := record.Holder{Host: "cassandra-tools", PID: 1, Session: "me", Machine: "boot:b1/pid:[1]"}
	cases := []struct {
		name   string
		holder record.Holder
		want   LockState
		asks   bool
	}{
		{"same hostname, other machine", record.Holder{Host: "cassandra-tools", PID: 7, Session: "x", Machine: "boot:b2/pid:[1]"}, HeldElsewhere, false},
		{"same machine, live pid", record.Holder{Host: "cassandra-tools", PID: 7, Session: "x", Machine: "boot:b1/pid:[1]"}, HeldHere, true},
		{"same machine, our pid, another session", record.Holder{Host: "cassandra-tools", PID: 1, Session: "x", Machine: "boot:b1/pid:[1]"}, Free, false},
		{"older plugin, same host, our pid", record.Holder{Host: "cassandra-tools", PID: 1, Session: "x"}, HeldElsewhere, false},
		{"older plugin, same host, live pid", record.Holder{Host: "cassandra-tools", PID: 7, Session: "x"}, HeldHere, true},
		{"released on another machine", record.Holder{Host: "laptop", PID: 7, Session: "x", ReleasedAt: &now}, Free, false},
	}
	for _, c := range cases {
		cp := sample(1)
		cp.Holder = c.holder
		asked = 0
		got, _, _ := Lock(cp, me, now, alive)
		if got != c.want || (asked > 0) != c.asks {
			t.Errorf("%s: %v (asked alive %d times), want %v (asks %v)", c.name, got, asked, c.want, c.asks)
		}
	}
}

// TestRecordChanges: the record a waiting run compares changes with every write of
// the holder, whatever its clock says.
func TestRecordChanges(t *testing.T) {
	cp := sample(1)
	cp.Holder = record.Holder{Host: "b", Session: "b"}
	r := cp.Record()
	cp.Seq++
	if cp.Record() == r {
		t.Fatal("a new seq leaves the record unchanged")
	}
	r = cp.Record()
	past := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) // a clock far behind
	cp.Holder.RenewedAt = &past
	if cp.Record() == r {
		t.Fatal("a renewal leaves the record unchanged")
	}
}

// TestJudgeByOurClock: a watcher judges a holder elsewhere by how long its record stays
// unchanged on the watcher's clock, never by the holder's timestamps: a holder whose
// clock is 5 minutes behind and renews is alive however many leases pass; one that stops
// is stopped exactly one lease after its last change was seen. A holder that provably
// stopped is judged so at the first read.
func TestJudgeByOurClock(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	me := record.Holder{Host: "tools", PID: 1, Session: "me", Machine: "boot:me/pid:[1]"}
	alive := func(h record.Holder) bool { return h.PID == 7 }
	cp := sample(1)
	behind := t0.Add(-5 * time.Minute)
	cp.Holder = record.Holder{User: "alice", Host: "laptop", PID: 7, Session: "a", LeaseSeconds: 60, RenewedAt: &behind}
	var seen Sighting
	var l Liveness
	// Renewals every 50 s of our clock for 10 minutes, each stamped 5 minutes behind.
	for at := t0; at.Before(t0.Add(10 * time.Minute)); at = at.Add(50 * time.Second) {
		if l, seen = Judge(cp, me, seen, at, alive); l.Stopped {
			t.Fatalf("at +%s a renewing holder is judged stopped: %+v", at.Sub(t0), l)
		}
		cp.Seq++
		r := at.Add(-5 * time.Minute)
		cp.Holder.RenewedAt = &r
	}
	last := t0.Add(10 * time.Minute)
	l, seen = Judge(cp, me, seen, last, alive) // the last renewal is seen here
	if l.Stopped || l.Quiet != 0 || l.Lease != time.Minute {
		t.Fatalf("fresh renewal: %+v", l)
	}
	if l, seen = Judge(cp, me, seen, last.Add(59*time.Second), alive); l.Stopped || l.Quiet != 59*time.Second {
		t.Fatalf("59 s after the last change: %+v, want alive", l)
	}
	if l, _ = Judge(cp, me, seen, last.Add(time.Minute), alive); !l.Stopped || !strings.Contains(l.Why, "did not change for 1m0s of this machine's clock") {
		t.Fatalf("a lease after the last change: %+v, want stopped", l)
	}
	// A record seen for the first time is never stopped, however old its timestamps.
	if l, _ = Judge(cp, me, Sighting{}, last.Add(time.Hour), alive); l.Stopped {
		t.Fatalf("first read of an old record: %+v, want alive", l)
	}
	for _, c := range []struct {
		name    string
		h       record.Holder
		stopped bool
		why     string
	}{
		{"same machine, process gone", record.Holder{Host: "tools", PID: 8, Session: "b", Machine: me.Machine}, true, "process 8 on tools is gone"},
		{"same machine, process alive", record.Holder{Host: "tools", PID: 7, Session: "b", Machine: me.Machine}, false, "a live process on this machine"},
		{"released elsewhere", record.Holder{Host: "laptop", PID: 7, Session: "b", ReleasedAt: &t0}, true, "stopped at"},
	} {
		cp.Holder = c.h
		if l, _ := Judge(cp, me, Sighting{}, t0, alive); l.Stopped != c.stopped || !strings.Contains(l.Why, c.why) {
			t.Errorf("%s: %+v, want stopped=%v (%s)", c.name, l, c.stopped, c.why)
		}
	}
}
