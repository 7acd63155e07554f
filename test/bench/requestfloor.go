package bench

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// What each request of a removed node's cycle is for: when the marginal count is above
// the target, the bench says which requests make it up and why each stays. Keys are
// KeyStat.Key; a request of a key missing here is named without a reason.
var requestReasons = map[string]string{
	"EXEC nodetool decommission":      "the action",
	"PATCH statefulsets":              "the action (shrink, a JSON patch testing the replica count)",
	"DELETE persistentvolumeclaims":   "the action (UID precondition)",
	"WATCH pods":                      "waits for the pod to go, no poll",
	"PATCH cassandraclusters":         "the checkpoint write, resourceVersion-tested: the decommission recorded started before it acts",
	"GET cassandraclusters/NAME":      "fence reads: this run still holds the operation right before the shrink and right before the claims go (evident steps write nothing to prove it)",
	"EXEC nodetool netstats":          "the node's own mode: NORMAL right before its decommission, DECOMMISSIONED after it",
	"EXEC nodetool status":            "the ring from a remaining node: every other node UN right before the decommission (safe now), the node gone after it",
	"GET pods/NAME":                   "the node's pod before its decommission: the planned one (UID), not being deleted",
	"GET statefulsets/NAME":           "the claims' guard: the StatefulSet no longer wants the pod, read now (no write tests it)",
	"GET persistentvolumeclaims/NAME": "the claims still there, with the UIDs the deletion is preconditioned on",
	"POST events":                     "Events, batched per 5 s window",
}

// marginalWhy breaks the marginal requests per removed node (hi vs lo) down by key,
// each with what it is for.
func marginalWhy(lo, hi *ScaleAnalysis) string {
	d := float64(hi.Removed - lo.Removed)
	count := func(a *ScaleAnalysis) map[string]int {
		m := map[string]int{}
		for _, k := range a.Requests.Breakdown {
			m[k.Key] = k.Count
		}
		return m
	}
	l, h := count(lo), count(hi)
	type row struct {
		key string
		per float64
	}
	var rows []row
	for k, n := range h {
		if per := float64(n-l[k]) / d; math.Abs(per) >= 0.05 {
			rows = append(rows, row{k, per})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].per != rows[j].per {
			return rows[i].per > rows[j].per
		}
		return rows[i].key < rows[j].key
	})
	var s, unknown []string
	for _, r := range rows {
		why := requestReasons[r.key]
		if why == "" {
			why = "no reason recorded"
			unknown = append(unknown, r.key)
		}
		s = append(s, fmt.Sprintf("%s %.1f (%s)", r.key, r.per, why))
	}
	out := "per removed node: " + strings.Join(s, "; ") + ". "
	if len(unknown) > 0 {
		return out + "Not accounted for, look there first: " + strings.Join(unknown, ", ")
	}
	return out + "Each is an action, its checkpoint write, a fence or a safety read made right before acting, and none is asked twice: " +
		"≤ 12 would mean dropping a fence or a re-check"
}
