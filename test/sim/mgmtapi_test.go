package sim

import (
	"testing"
	"time"
)

func TestStartDecommissionReturnsAtOnce(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	s := NewMemory(Options{Version: V41, DecommissionTime: time.Minute, RF: 3}, []NodeSpec{
		{Pod: "p0", Address: "10.0.0.1"}, {Pod: "p1", Address: "10.0.0.2"}, {Pod: "p2", Address: "10.0.0.3"},
	}, clock)
	code, id, out, err := s.StartDecommission("p2", true)
	if err != nil || code != ExitOK || id == "" {
		t.Fatalf("StartDecommission = %d %q %q %v", code, id, out, err)
	}
	v, _ := s.Node("p2")
	if v.PeerCode != "UL" || v.DecommissionCalls != 1 || v.DecommissionsStarted != 1 {
		t.Fatalf("after the call: %+v", v)
	}
	// Without force the RF guard refuses (N=3 <= RF=3 on the remaining owners).
	code, id, _, _ = s.StartDecommission("p1", false)
	if code == ExitOK || id != "" {
		t.Fatalf("RF guard: %d %q", code, id)
	}
	now = now.Add(time.Minute)
	v, _ = s.Node("p2")
	if !v.Left || v.PeerCode != "" {
		t.Fatalf("a minute later: %+v", v)
	}
}
