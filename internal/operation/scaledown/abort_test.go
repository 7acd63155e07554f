package scaledown

import (
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// TestNodeSteps: abort judges a node by its decommission step and whether any of its
// steps is unfinished, never by another node's steps.
func TestNodeSteps(t *testing.T) {
	cp := &record.Checkpoint{Steps: []record.Step{
		{Kind: record.StepPauseOperator, State: record.StateDone},
		{Kind: record.StepDecommission, Pod: "p-2", State: record.StateDone},
		{Kind: record.StepShrinkSTS, Pod: "p-2", State: record.StateDone},
		{Kind: record.StepDecommission, Pod: "p-1", State: record.StateStarted},
		{Kind: record.StepShrinkSTS, Pod: "p-1", State: record.StatePending},
	}}
	if dec, unfinished := nodeSteps(cp, "p-2"); dec.State != record.StateDone || unfinished {
		t.Errorf("p-2: %+v unfinished=%v", dec, unfinished)
	}
	if dec, unfinished := nodeSteps(cp, "p-1"); dec.State != record.StateStarted || !unfinished {
		t.Errorf("p-1: %+v unfinished=%v", dec, unfinished)
	}
}

// TestJudgeUntouched: a node abort may leave a member is NORMAL or DECOMMISSION_FAILED,
// sends no Unbootstrap stream and, whenever its own mode is not enough (a decommission
// recorded started, or DECOMMISSION_FAILED), is seen UN by a peer. DECOMMISSION_FAILED
// while streaming or seen leaving is CASSANDRA-21493/21583: still leaving.
func TestJudgeUntouched(t *testing.T) {
	normal := nodetool.Netstats{Mode: pubnodetool.ModeNormal}
	failed := nodetool.Netstats{Mode: pubnodetool.ModeDecommissionFailed}
	sending := []nodetool.StreamSummary{{Plan: nodetool.PlanUnbootstrap, Direction: nodetool.DirSending, Peer: "/10.0.0.1"}}
	receiving := []nodetool.StreamSummary{{Plan: nodetool.PlanUnbootstrap, Direction: nodetool.DirReceiving, Peer: "/10.0.0.1"}}
	failedStreaming := nodetool.Netstats{Mode: pubnodetool.ModeDecommissionFailed, Streaming: true, Streams: sending}
	normalReceiving := nodetool.Netstats{Mode: pubnodetool.ModeNormal, Streaming: true, Streams: receiving}
	un := peerView{reader: "p-0", row: pubnodetool.Node{Status: "U", State: "N"}, listed: true, read: true}
	ul := peerView{reader: "p-0", row: pubnodetool.Node{Status: "U", State: "L"}, listed: true, read: true}
	dn := peerView{reader: "p-0", row: pubnodetool.Node{Status: "D", State: "N"}, listed: true, read: true}
	gone := peerView{reader: "p-0", read: true}
	unread := peerView{reader: "p-0"}
	for _, tc := range []struct {
		name      string
		ns        nodetool.Netstats
		seen      peerView
		sent      bool
		why, note string
		err       bool
	}{
		{name: "pending, NORMAL: its own word is enough", ns: normal, seen: unread},
		{name: "pending, NORMAL, receiving a peer's stream", ns: normalReceiving, seen: unread},
		{name: "pending, LEAVING", ns: nodetool.Netstats{Mode: pubnodetool.ModeLeaving}, seen: unread, why: "is LEAVING"},
		{name: "pending, DECOMMISSION_FAILED after a refusal", ns: failed, seen: un, note: "node p-2 reports DECOMMISSION_FAILED after Cassandra's refusal; it is still a member of the ring (UN on p-0, no stream) and keeps serving"},
		{name: "pending, DECOMMISSION_FAILED, seen UL", ns: failed, seen: ul, why: "is DECOMMISSION_FAILED but p-0 sees it UL (leaving)"},
		{name: "pending, DECOMMISSION_FAILED, streaming", ns: failedStreaming, seen: un, why: "is DECOMMISSION_FAILED but streams out its data (an Unbootstrap plan in its netstats)"},
		{name: "pending, DECOMMISSION_FAILED, gone from the ring", ns: failed, seen: gone, why: "is DECOMMISSION_FAILED but the ring read on p-0 no longer lists it (LEFT announced)"},
		{name: "started, NORMAL, UN: never sent", ns: normal, seen: un, sent: true},
		{name: "started, NORMAL, seen UL", ns: normal, seen: ul, sent: true, why: "is NORMAL but p-0 sees it UL (leaving)"},
		{name: "started, NORMAL, seen DN", ns: normal, seen: dn, sent: true, why: "is NORMAL but p-0 sees it DN"},
		{name: "started, NORMAL, streaming", ns: nodetool.Netstats{Mode: pubnodetool.ModeNormal, Streaming: true, Streams: sending}, seen: un, sent: true, why: "is NORMAL but streams out its data (an Unbootstrap plan in its netstats)"},
		{name: "started, NORMAL, ring not read", ns: normal, seen: unread, sent: true, err: true},
		{name: "started, DECOMMISSIONED", ns: nodetool.Netstats{Mode: pubnodetool.ModeDecommissioned}, seen: un, sent: true, why: "is DECOMMISSIONED"},
	} {
		note, why, err := judgeUntouched("p-2", tc.ns, tc.seen, tc.sent)
		if note != tc.note || why != tc.why || (err != nil) != tc.err {
			t.Errorf("%s: note %q why %q err %v; want note %q why %q err %v", tc.name, note, why, err, tc.note, tc.why, tc.err)
		}
	}
}

// TestSettleLeft: a decommission recorded started is judged by the node alone only once
// a nodetool exec sent at that moment would have reached Cassandra.
func TestSettleLeft(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	for _, tc := range []struct {
		started *time.Time
		want    time.Duration
	}{
		{nil, time.Minute},
		{at(0), time.Minute},
		{at(time.Minute / 4), time.Minute * 3 / 4},
		{at(time.Minute), 0},
		{at(time.Hour), 0},
		{at(-time.Minute), time.Minute + time.Minute}, // another machine's clock ahead
	} {
		if got := settleLeft(tc.started, now); got != tc.want {
			t.Errorf("started %v: %s, want %s", tc.started, got, tc.want)
		}
	}
}
