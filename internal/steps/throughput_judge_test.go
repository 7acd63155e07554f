package steps

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

var (
	v41  = nodetool.Version{Major: 4, Minor: 1, Patch: 6}
	v311 = nodetool.Version{Major: 3, Minor: 11, Patch: 11}
)

func TestSameRate(t *testing.T) {
	mib, mb, free := nodetool.MiBPerSecond, nodetool.MegabitsPerSecond, nodetool.Unthrottled()
	assert.True(t, sameRate(mb(200), mib(23.84185791015625), v41), "200 Mb/s reads back as 23.84185791015625 MiB/s with -m (§1.3)")
	assert.True(t, sameRate(mb(1600), mib(200), v311), "3.11.0-11 counted 131 072 B per megabit (§1.2)")
	assert.False(t, sameRate(mb(1600), mib(200), v41))
	assert.True(t, sameRate(free, nodetool.Throughput{Unlimited: true, Unit: nodetool.Megabits}, v311), "3.11's 0 Mb/s is unthrottled")
	assert.False(t, sameRate(free, mib(24), v41))
	assert.False(t, sameRate(mib(24), mib(25), v41))
}

func TestToSet(t *testing.T) {
	order := []nodetool.Limiter{nodetool.LimiterStream, nodetool.LimiterEntireSSTable}
	read := map[nodetool.Limiter]nodetool.Throughput{nodetool.LimiterStream: nodetool.MiBPerSecond(200), nodetool.LimiterEntireSSTable: nodetool.MiBPerSecond(24)}
	assert.Equal(t, []nodetool.Limiter{nodetool.LimiterEntireSSTable}, toSet(order, read, nodetool.MiBPerSecond(200), v41), "a crash between two sets: only the one left")
	assert.Empty(t, toSet(order, read, nodetool.MiBPerSecond(200), v41)[1:])
	assert.Equal(t, order, toSet(order, read, nodetool.Unthrottled(), v41))
}

func TestJudgeRestore(t *testing.T) {
	rec, target := nodetool.MiBPerSecond(24), nodetool.MiBPerSecond(200)
	look := func(now nodetool.Throughput, setDone, restoreStarted bool) restoreLook {
		return restoreLook{Pod: "p", Limiter: nodetool.LimiterStream, Now: now, Recorded: rec, Target: target, Version: v41, SetDone: setDone, RestoreStarted: restoreStarted}
	}
	for _, tc := range []struct {
		name string
		look restoreLook
		set  bool
		warn string
	}{
		{"at the rate set: back", look(target, true, false), true, ""},
		{"at the rate, set only started: back", look(target, false, false), true, ""},
		{"at its record, never set", look(rec, false, false), false, ""},
		{"at its record after this restore acted", look(rec, true, true), false, ""},
		{"at its record, set, restore never acted: restarted", look(rec, true, false), false, "the stream limiter of p reads 24 MiB/s, its value before this operation, not the 200 MiB/s it set: the node restarted since"},
		{"at neither: left as it is", look(nodetool.MiBPerSecond(64), true, false), false, "reads 64 MiB/s, neither the 200 MiB/s this operation set nor the 24 MiB/s recorded before it"},
		{"recorded is the rate: nothing to do", restoreLook{Pod: "p", Now: target, Recorded: target, Target: target, Version: v41, SetDone: true}, false, ""},
	} {
		set, warn := judgeRestore(tc.look)
		assert.Equal(t, tc.set, set, tc.name)
		if tc.warn == "" {
			assert.Empty(t, warn, tc.name)
		} else {
			assert.Contains(t, warn, tc.warn, tc.name)
		}
	}
}

func TestRestorable(t *testing.T) {
	odd := nodetool.MiBPerSecond(23.84185791015625) // 200 Mb/s
	assert.NoError(t, restorable("p", v41, nodetool.LimiterStream, odd), "the stream limiter takes it back in megabits")
	err := restorable("p", v41, nodetool.LimiterEntireSSTable, odd)
	assert.ErrorContains(t, err, "the entire-sstable limiter of p reads 23.84185791015625 MiB/s, which nodetool cannot set back exactly")
	assert.NoError(t, restorable("p", v311, nodetool.LimiterStream, nodetool.MegabitsPerSecond(200)))
}

func TestStreamTimeText(t *testing.T) {
	gib := int64(1 << 30)
	assert.Equal(t, "10.0 GiB in ≥ 52s (in ≥ 8m at the default 24 MiB/s)", StreamTimeText(10*gib, nodetool.MiBPerSecond(200), v41))
	assert.Equal(t, "1.0 TiB as fast as disk and network go (in ≥ 12h09m at the default 24 MiB/s)", StreamTimeText(1024*gib, nodetool.Unthrottled(), v41))
	assert.Equal(t, "1.0 GiB in ≥ 6s (in ≥ 41s at the default 200 Mb/s)", StreamTimeText(gib, nodetool.MegabitsPerSecond(1600), v311))
}

// throughputCP is a scale-down checkpoint of pod p with the throughput steps in states.
func throughputCP(set, restore string) *record.Checkpoint {
	return &record.Checkpoint{
		Throughput: &record.StreamThroughput{Rate: record.Rate{Value: 200, Unit: "MiB/s"},
			Recorded: []record.RecordedThroughput{{Pod: "p", Version: "4.1.6", Limiters: map[string]record.Rate{"stream": {Value: 24, Unit: "MiB/s"}}}}},
		Steps: []record.Step{
			{ID: "record-throughput/p", Kind: record.StepRecordThroughput, Pod: "p", State: record.StateDone},
			{ID: "set-throughput/p", Kind: record.StepSetThroughput, Pod: "p", State: set},
			{ID: "decommission/p", Kind: record.StepDecommission, Pod: "p", State: record.StatePending},
			{ID: "restore-throughput/p", Kind: record.StepRestoreThroughput, Pod: "p", State: restore},
		},
	}
}

func TestThroughputToRestore(t *testing.T) {
	p, s, d := record.StatePending, record.StateStarted, record.StateDone
	assert.Empty(t, ThroughputToRestore(throughputCP(p, p), nil), "a set never started never acted")
	assert.Len(t, ThroughputToRestore(throughputCP(s, p), nil), 1, "a set started may have acted")
	assert.Len(t, ThroughputToRestore(throughputCP(d, s), nil), 1)
	assert.Empty(t, ThroughputToRestore(throughputCP(d, d), nil))
	assert.Empty(t, ThroughputToRestore(throughputCP(d, p), func(pod string) bool { return pod == "p" }), "another plan restores it")
	assert.Empty(t, ThroughputToRestore(&record.Checkpoint{}, nil))
	assert.Equal(t, []string{"the stream throughput this operation set on p (200 MiB/s) goes back to what was recorded before it (unless the node left the ring meanwhile)"}, ThroughputNotes(throughputCP(d, p)))
}

func TestCarryThroughput(t *testing.T) {
	from := throughputCP(record.StateDone, record.StatePending)
	to := throughputCP(record.StatePending, record.StatePending)
	to.Throughput.Recorded = nil
	skip := CarryThroughput(from, to)
	r, ok := to.Throughput.RecordOf("p")
	assert.True(t, ok)
	assert.Equal(t, 24.0, r.Limiters["stream"].Value, "the value from before the first plan")
	assert.True(t, skip("p"))
	assert.False(t, skip("q"))
	st, _ := to.Step("set-throughput/p")
	assert.Equal(t, record.StateStarted, st.State, "the first plan set it: the new plan's set is as far")

	none := CarryThroughput(from, &record.Checkpoint{})
	assert.False(t, none("p"), "a plan without a rate restores nothing: the old plan's restore must run")
}

// TestJVMGone: a limit is gone with its JVM only when the JVM is known down (container
// not running, JMX connection refused); any other failure is unknown.
func TestJVMGone(t *testing.T) {
	running := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
		{Name: "cassandra", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	stopped := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
		{Name: "cassandra", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}}
	refused := &pubnodetool.UnreachableError{Pod: "p", Message: "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'."}
	timedOut := &pubnodetool.UnreachableError{Pod: "p", Message: "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection timed out'."}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		err  error
		gone bool
	}{
		{"container not running", stopped, errors.New("exec: container not found"), true},
		{"connection refused", running, refused, true},
		{"connection timed out", running, timedOut, false},
		{"exec failed", running, errors.New("Internal error occurred: error executing command in container"), false},
		{"api timeout", running, context.DeadlineExceeded, false},
	} {
		if got := jvmGone("p", c.pod, "cassandra", c.err) != ""; got != c.gone {
			t.Errorf("%s: gone %v, want %v", c.name, got, c.gone)
		}
	}
}

// TestHadFromMark: a limiter still at a mark's rate had the mark's value; one at any
// other reading (restarted, changed since), or without a mark, had what it reads.
func TestHadFromMark(t *testing.T) {
	mib := nodetool.MiBPerSecond
	m := ThroughputMark{OperationID: "scale-1", Rate: RecordRate(mib(200)), Had: map[string]record.Rate{string(nodetool.LimiterStream): RecordRate(mib(24))}}
	assert.Equal(t, mib(24), hadFromMark(m, true, nodetool.LimiterStream, mib(200), v41), "at the mark's rate: the mark's value")
	assert.Equal(t, mib(50), hadFromMark(m, true, nodetool.LimiterStream, mib(50), v41), "changed since: what it reads")
	assert.Equal(t, mib(200), hadFromMark(m, false, nodetool.LimiterStream, mib(200), v41), "no mark: what it reads")
	assert.Equal(t, mib(200), hadFromMark(m, true, nodetool.LimiterEntireSSTable, mib(200), v41), "a limiter the mark does not hold: what it reads")
}
