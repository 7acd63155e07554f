package replacenode

import (
	"strings"
	"testing"

	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

func row(code, addr, id string, tokens int, load string) pubnodetool.Node {
	return pubnodetool.Node{DC: "dc1", Rack: "r1", Status: code[:1], State: code[1:], Address: addr, HostID: id, Tokens: tokens, Load: load}
}

// TestJudgeFollowsTheRingOfAReplace: the rows of §4.4, phase by phase.
func TestJudgeFollowsTheRingOfAReplace(t *testing.T) {
	rep := &record.Replacement{Pod: "p2", HostID: "old", Address: "10.0.0.3", Tokens: 16}
	up := []pubnodetool.Node{row("UN", "10.0.0.1", "a", 16, "1 GiB"), row("UN", "10.0.0.2", "b", 16, "1 GiB")}
	ring := func(rows ...pubnodetool.Node) pubnodetool.Ring {
		return pubnodetool.Ring{Nodes: append(append([]pubnodetool.Node{}, up...), rows...)}
	}
	for _, tc := range []struct {
		name  string
		newIP string
		ring  pubnodetool.Ring
		done  bool
		join  bool
		fail  string
	}{
		{"no address yet", "", ring(row("DN", "10.0.0.3", "old", 16, "1 GiB")), false, false, ""},
		{"starting: dead row still there", "10.0.0.9", ring(row("DN", "10.0.0.3", "old", 16, "1 GiB")), false, false, ""},
		{"streaming", "10.0.0.9", ring(row("UJ", "10.0.0.9", "new", 16, "12 MiB")), false, true, ""},
		{"replaced", "10.0.0.9", ring(row("UN", "10.0.0.9", "new", 16, "1 GiB")), true, false, ""},
		{"UN without data (RF 1)", "10.0.0.9", ring(row("UN", "10.0.0.9", "new", 16, "0 bytes")), true, false, ""},
		{"UN, Load unreadable", "10.0.0.9", ring(row("UN", "10.0.0.9", "new", 16, "?")), false, false, ""},
		{"new node beside the dead one", "10.0.0.9", ring(row("DN", "10.0.0.3", "old", 16, "1 GiB"), row("UJ", "10.0.0.9", "new", 16, "1 MiB")), false, false, "joined as a new node"},
		{"other token count", "10.0.0.9", ring(row("UN", "10.0.0.9", "new", 8, "1 GiB")), false, false, "owns 8 tokens"},
		{"same address, replacing", "10.0.0.3", ring(row("DN", "10.0.0.3", "old", 16, "1 GiB")), false, false, ""},
		{"same address, done", "10.0.0.3", ring(row("UN", "10.0.0.3", "old", 16, "1 GiB")), true, false, ""},
		{"same address, another host ID", "10.0.0.3", ring(row("UN", "10.0.0.3", "other", 16, "1 GiB")), false, false, "not the dead node's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ph, err := judge(rep, tc.newIP, tc.ring)
			if tc.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fail) {
					t.Fatalf("err = %v, want one saying %q", err, tc.fail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ph.done != tc.done || ph.joining != tc.join {
				t.Errorf("phase %+v, want done %v joining %v", ph, tc.done, tc.join)
			}
			if !ph.done && ph.what == "" {
				t.Error("a phase not done says nothing")
			}
		})
	}
}

func TestDeadRowAndRingProblems(t *testing.T) {
	r := pubnodetool.Ring{Nodes: []pubnodetool.Node{row("UN", "10.0.0.1", "a", 16, "1 GiB"), row("UN", "10.0.0.2", "b", 16, "1 GiB"), row("DN", "10.0.0.3", "dead", 16, "1 GiB")}}
	live := map[string]bool{"10.0.0.1": true, "10.0.0.2": true}
	for _, tc := range []struct {
		name, podIP, address, want, fail string
	}{
		{"by the pod's address", "10.0.0.3", "", "dead", ""},
		{"pod re-created on another address", "10.0.0.9", "", "dead", ""},
		{"named", "", "10.0.0.3", "dead", ""},
		{"named, unknown", "", "10.0.0.7", "", "no node of the ring"},
	} {
		got, err := deadRow(r, "dc1", "r1", "p2", tc.podIP, tc.address, live)
		if tc.fail != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fail) {
				t.Errorf("%s: err = %v", tc.name, err)
			}
			continue
		}
		if err != nil || got.HostID != tc.want {
			t.Errorf("%s: got %s, %v", tc.name, got.HostID, err)
		}
	}
	two := pubnodetool.Ring{Nodes: append(append([]pubnodetool.Node{}, r.Nodes...), row("DN", "10.0.0.4", "dead2", 16, "1 GiB"))}
	if _, err := deadRow(two, "dc1", "r1", "p2", "", "", live); err == nil || !strings.Contains(err.Error(), "--address") {
		t.Errorf("two candidates: err = %v, want one asking for --address", err)
	}
	if bad := ringProblems(r, "dc1", "dead", "10.0.0.1"); len(bad) != 0 {
		t.Errorf("a ring fit for a replace has problems: %v", bad)
	}
	for name, ring := range map[string]pubnodetool.Ring{
		"the node is up":     {Nodes: []pubnodetool.Node{row("UN", "10.0.0.1", "a", 16, ""), row("UN", "10.0.0.3", "dead", 16, "")}},
		"another node down":  {Nodes: []pubnodetool.Node{row("DN", "10.0.0.1", "a", 16, ""), row("DN", "10.0.0.3", "dead", 16, "")}},
		"a node joining":     {Nodes: []pubnodetool.Node{row("UN", "10.0.0.1", "a", 16, ""), row("UJ", "10.0.0.5", "j", 16, ""), row("DN", "10.0.0.3", "dead", 16, "")}},
		"dead node gone":     {Nodes: []pubnodetool.Node{row("UN", "10.0.0.1", "a", 16, "")}},
		"the reader is down": {Nodes: []pubnodetool.Node{row("DN", "10.0.0.1", "a", 16, ""), row("DN", "10.0.0.3", "dead", 16, "")}},
	} {
		if bad := ringProblems(ring, "dc1", "dead", "10.0.0.1"); len(bad) == 0 {
			t.Errorf("%s: no problem found", name)
		}
	}
}

// TestJudgeNewNodeRemovedByHand: a new pod that joined as a new node is named (its Host
// ID kept by the wait); once the dead node is removed, that node UN ends the wait as
// "removed, not replaced", and it never passes for a replacement while the dead row is
// still there.
func TestJudgeNewNodeRemovedByHand(t *testing.T) {
	up := []pubnodetool.Node{row("UN", "10.0.0.1", "a", 16, "1 GiB"), row("UN", "10.0.0.2", "b", 16, "1 GiB")}
	ring := func(rows ...pubnodetool.Node) pubnodetool.Ring {
		return pubnodetool.Ring{Nodes: append(append([]pubnodetool.Node{}, up...), rows...)}
	}
	rep := &record.Replacement{Pod: "p2", HostID: "old", Address: "10.0.0.3", Tokens: 16}
	ph, err := judge(rep, "10.0.0.9", ring(row("DN", "10.0.0.3", "old", 16, "1 GiB"), row("UN", "10.0.0.9", "new", 16, "1 GiB")))
	if err == nil || ph.newNode != "new" {
		t.Fatalf("beside the dead row: phase %+v, err %v; want the new node named and an error", ph, err)
	}
	rep.NewNode = "new"
	if ph, err := judge(rep, "10.0.0.9", ring(row("DN", "10.0.0.3", "old", 16, "1 GiB"), row("UN", "10.0.0.9", "new", 16, "1 GiB"))); err == nil || ph.done {
		t.Errorf("recorded, dead row still there: phase %+v, err %v; want the error again", ph, err)
	}
	if ph, err := judge(rep, "10.0.0.9", ring(row("UJ", "10.0.0.9", "new", 16, "1 GiB"))); err != nil || ph.done {
		t.Errorf("dead removed, new node UJ: phase %+v, err %v; want waiting", ph, err)
	}
	if ph, err := judge(rep, "10.0.0.9", ring(row("UN", "10.0.0.9", "new", 16, "1 GiB"))); err != nil || !ph.done || !ph.asNew {
		t.Errorf("dead removed, new node UN: phase %+v, err %v; want done as a new node", ph, err)
	}
}
