package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
)

// KeyStat is how often one kind of request was made.
type KeyStat struct {
	Key     string  `json:"key"`
	Count   int     `json:"count"`
	PerNode float64 `json:"perNode"`
	// Bytes is the response bytes read; MeanMS the mean time until the response was
	// complete (body read); TotalPerNodeS that time summed, per removed node.
	Bytes         int64   `json:"bytes"`
	MeanMS        float64 `json:"meanMs"`
	TotalPerNodeS float64 `json:"totalPerNodeS"`
	// ByStep is, per removed node, how many were sent while each kind of step was being
	// worked on (checked, done or waited for).
	ByStep map[string]float64 `json:"byStep,omitempty"`
}

// RequestStats counts the requests of one in-process run, client-side.
type RequestStats struct {
	Total     int `json:"total"`
	Reads     int `json:"reads"` // GET, LIST and discovery
	Writes    int `json:"writes"`
	Watches   int `json:"watchesOpened"`
	Execs     int `json:"execs"` // pods/exec (nodetool)
	Discovery int `json:"discovery"`
	// PerNode are per removed node; Loop* count only the requests between the checkpoint's
	// creation and its removal (the step loop), without the start-up.
	PerNode        float64 `json:"perNode"`
	ReadsPerNode   float64 `json:"readsPerNode"`
	WritesPerNode  float64 `json:"writesPerNode"`
	WatchesPerNode float64 `json:"watchesPerNode"`
	ExecsPerNode   float64 `json:"execsPerNode"`
	Startup        int     `json:"startup"` // before the checkpoint was created
	Loop           int     `json:"loop"`
	LoopPerNode    float64 `json:"loopPerNode"`
	// Pod LISTs: all of them, those without any selector (every pod of the namespace),
	// those in the step loop, and the bytes they returned.
	PodLists            int           `json:"podLists"`
	PodListsUnselective int           `json:"podListsUnselective"`
	PodListsInLoop      int           `json:"podListsInLoop"`
	PodListsPerNode     float64       `json:"podListsPerNode"`
	PodListSelectors    []PodListStat `json:"podListSelectors"`
	PodListBytes        int64         `json:"podListBytes"`
	// LoopAPIS is the time (s) at least one API request (not exec, not watch) of the
	// step loop was waiting for its response: the union of their intervals.
	LoopAPIS      float64   `json:"loopApiS"`
	RespBytes     int64     `json:"respBytes"`
	LeaseRenewals int       `json:"leaseRenewals"`
	Breakdown     []KeyStat `json:"breakdown"`
}

// PodListStat counts the pod LISTs with one selector.
type PodListStat struct {
	Selector string  `json:"selector"`
	Count    int     `json:"count"`
	InLoop   int     `json:"inLoop"`
	MeanKiB  float64 `json:"meanKiB"`
	// ByStep: how many were sent while each kind of step was being worked on.
	ByStep map[string]int `json:"byStep"`
}

// ExecStat summarises the nodetool calls of one command.
type ExecStat struct {
	Command string  `json:"command"`
	Count   int     `json:"count"`
	PerNode float64 `json:"perNode"`
	MeanMS  float64 `json:"meanMs"`
	P50MS   float64 `json:"p50Ms"`
	// Concurrent are calls that ran entirely inside a decommission call (the progress
	// reports): they cost load, not time.
	Concurrent int `json:"concurrent"`
}

// StepShare is the wall time per removed node between the checkpoint writes that mark
// the steps of one kind done (what the run spent on that kind of step).
type StepShare struct {
	Kind     string  `json:"kind"`
	PerNodeS float64 `json:"perNodeS"`
}

// ScaleAnalysis is what one scale run measured.
type ScaleAnalysis struct {
	Label   string  `json:"label"`
	Mode    string  `json:"mode"`
	Repeat  int     `json:"repeat,omitempty"` // the how-manieth run of this size (0: the first)
	From    int     `json:"from"`
	To      int     `json:"to"`
	Removed int     `json:"removed"`
	PollS   float64 `json:"pollIntervalS"`
	WallS   float64 `json:"wallS"`
	// DecommissionS is the simulated decommission time of every removed node (known);
	// TerminationS the pod terminations (StatefulSet replicas lowered → pod object gone,
	// both seen by the observer's watches).
	DecommissionS      float64       `json:"decommissionS"`
	TerminationS       float64       `json:"terminationS"`
	TerminationMissing int           `json:"terminationMissing"`
	OverheadS          float64       `json:"overheadS"`
	OverheadPerNodeS   float64       `json:"overheadPerNodeS"`
	StartupS           float64       `json:"startupS,omitempty"`
	FinishS            float64       `json:"finishS,omitempty"`
	StepShares         []StepShare   `json:"stepShares,omitempty"`
	Requests           *RequestStats `json:"requests,omitempty"`
	Execs              []ExecStat    `json:"execs,omitempty"`
	// Reaction latencies (ms): state change → the plugin's next write.
	LatencyDecommissionedMS []float64 `json:"latencyDecommissionedMs,omitempty"`
	LatencyPodGoneMS        []float64 `json:"latencyPodGoneMs,omitempty"`
	LatencyRecordedMS       []float64 `json:"latencyRecordedMs,omitempty"`
	// LatencyBetween: per kind of change, the requests the plugin sent between the change
	// and its next write, on average per sample.
	LatencyBetween map[string]map[string]float64 `json:"latencyBetween,omitempty"`
	LatencyMissing int                           `json:"latencyMissing,omitempty"`
	LatencySamples []LatencySample               `json:"latencySamples,omitempty"`
	// Timeline: a small run's every request and nodetool call in the order sent, as
	// "+start–end ms KEY" from the run's start (what 2→1's fixed part is made of).
	Timeline       []string `json:"timeline,omitempty"`
	MaxRSS         int64    `json:"maxRssBytes,omitempty"`
	VmHWM          int64    `json:"vmHwmBytes,omitempty"`
	ObserverErrors []string `json:"observerErrors,omitempty"`
}

// LatencySample is one state change and the plugin's next write.
type LatencySample struct {
	Kind string `json:"kind"` // "decommissioned" or "gone"
	Pod  string `json:"pod"`
	// Source says who saw the change first: "observer" (its sim poll or pod watch) or
	// "plugin" (its watch, GET or decommission call, recorded by the round-tripper).
	Source string  `json:"source"`
	MS     float64 `json:"ms"`
	// MS is the time to the next write (NextWrite), RecordedMS to the checkpoint write
	// that records the step which waited for the change.
	NextWrite  string  `json:"nextWrite"`
	RecordedMS float64 `json:"recordedMs"`
	// Between are the requests sent between the change and the next write.
	Between []string `json:"between,omitempty"`
}

// cpWrite is a write of the checkpoint annotation (a PATCH of the CassandraCluster).
type cpWrite struct {
	call   *Call
	steps  []cpStep
	sig    string
	finish bool // the checkpoint was removed (the operation's end)
}

type cpStep struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Pod       string `json:"pod"`
	State     string `json:"state"`
	Attempts  int    `json:"attempts"`
	LastError string `json:"lastError"`
}

const annCheckpoint = "kubectl-cassandra.io/checkpoint"

// what says what a checkpoint write records: removal, or the steps not pending.
func (w cpWrite) what() string {
	if w.finish {
		return "removed"
	}
	var s []string
	for _, st := range w.steps {
		if st.State != "pending" && st.State != "done" {
			s = append(s, st.ID+" "+st.State)
		}
	}
	done := 0
	for _, st := range w.steps {
		if st.State == "done" {
			done++
		}
	}
	return fmt.Sprintf("%d done; %s", done, strings.Join(s, ", "))
}

func parseCPWrite(c *Call) (cpWrite, bool) {
	var body struct {
		Metadata struct {
			Annotations map[string]*string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal(c.ReqBody, &body) != nil {
		return cpWrite{}, false
	}
	v, ok := body.Metadata.Annotations[annCheckpoint]
	if !ok {
		return cpWrite{}, false
	}
	w := cpWrite{call: c}
	if v == nil {
		w.finish = true
		return w, true
	}
	var cp struct {
		Steps []cpStep `json:"steps"`
	}
	plain, err := checkpoint.Unwrap(*v)
	if err != nil || json.Unmarshal([]byte(plain), &cp) != nil {
		return cpWrite{}, false
	}
	w.steps = cp.Steps
	var b strings.Builder
	for _, s := range cp.Steps {
		b.WriteString(s.ID + "=" + s.State + "/" + strconv.Itoa(s.Attempts) + "/" + s.LastError + ";")
	}
	w.sig = b.String()
	return w, true
}

// Analyze computes the figures of one run.
func Analyze(r *ScaleRun) *ScaleAnalysis {
	a := &ScaleAnalysis{Label: r.Label, Mode: r.Mode, From: r.From, To: r.To, Removed: r.Removed(), PollS: r.Poll.Seconds(), WallS: r.Wall().Seconds(), MaxRSS: r.MaxRSS, VmHWM: r.VmHWM, ObserverErrors: r.Obs.Errors}
	n := float64(a.Removed)
	a.DecommissionS = n * r.Decommission.Seconds()
	for _, pod := range removedPods(r) {
		gone, ok1 := r.Obs.PodGone[pod]
		shrunk, ok2 := r.Obs.Shrunk[pod]
		if !ok1 || !ok2 {
			a.TerminationMissing++
			continue
		}
		a.TerminationS += gone.Sub(shrunk).Seconds()
	}
	a.OverheadS = a.WallS - a.DecommissionS - a.TerminationS
	a.OverheadPerNodeS = a.OverheadS / n
	if r.Mode != ModeInProcess {
		return a
	}

	// Checkpoint writes, lease renewals, the step loop's bounds.
	var cps []cpWrite
	renewal := map[*Call]bool{}
	prevSig := ""
	for _, c := range r.Calls {
		if c.Class != ClassWrite || c.Resource != "cassandraclusters" {
			continue
		}
		w, ok := parseCPWrite(c)
		if !ok {
			continue
		}
		if !w.finish && w.sig == prevSig {
			renewal[c] = true
		}
		if !w.finish {
			prevSig = w.sig
		}
		cps = append(cps, w)
	}
	var loopStart, loopEnd time.Time
	if len(cps) > 0 {
		loopStart = cps[0].call.Start
		loopEnd = cps[len(cps)-1].call.Start
		a.StartupS = loopStart.Sub(r.Start).Seconds()
		a.FinishS = r.End.Sub(loopEnd).Seconds()
		a.StepShares = stepShares(cps, n)
	}
	// phase names what the plugin was working on when a request left: the first step not
	// yet done in the last checkpoint written before it ("start-up" before the first).
	phase := func(t time.Time) string {
		i := sort.Search(len(cps), func(i int) bool { return cps[i].call.Start.After(t) })
		if i == 0 {
			return "start-up"
		}
		w := cps[i-1]
		if w.finish {
			return "finish"
		}
		for _, st := range w.steps {
			if st.State != "done" {
				return st.Kind
			}
		}
		return "finish"
	}

	// Requests.
	rs := &RequestStats{}
	byKey := map[string]*KeyStat{}
	durByKey := map[string]time.Duration{}
	listBySel := map[string]*PodListStat{}
	var selOrder []string
	var apiIntervals [][2]time.Time
	for _, c := range r.Calls {
		rs.Total++
		rs.RespBytes += c.RespBytes()
		switch c.Class {
		case ClassRead:
			rs.Reads++
			if c.Verb == "discovery" {
				rs.Discovery++
			}
		case ClassWrite:
			rs.Writes++
		case ClassWatch:
			rs.Watches++
		case ClassExec:
			rs.Execs++
		}
		inLoop := !loopStart.IsZero() && !c.Start.Before(loopStart) && !c.Start.After(loopEnd)
		if inLoop {
			rs.Loop++
		} else if loopStart.IsZero() || c.Start.Before(loopStart) {
			rs.Startup++
		}
		if renewal[c] {
			rs.LeaseRenewals++
		}
		if c.Verb == "list" && c.Resource == "pods" && c.Group == "" {
			rs.PodLists++
			rs.PodListBytes += c.RespBytes()
			sel := strings.TrimSpace(c.Query.Get("labelSelector") + " " + c.Query.Get("fieldSelector"))
			if sel == "" {
				rs.PodListsUnselective++
				sel = "(none: every pod of the namespace)"
			}
			ps := listBySel[sel]
			if ps == nil {
				ps = &PodListStat{Selector: sel, ByStep: map[string]int{}}
				listBySel[sel] = ps
				selOrder = append(selOrder, sel)
			}
			ps.Count++
			ps.MeanKiB += float64(c.RespBytes()) / 1024
			ps.ByStep[phase(c.Start)]++
			if inLoop {
				rs.PodListsInLoop++
				ps.InLoop++
			}
		}
		if inLoop && c.Class != ClassExec && c.Class != ClassWatch {
			apiIntervals = append(apiIntervals, [2]time.Time{c.Start, c.Done()})
		}
		k := c.Key()
		ks := byKey[k]
		if ks == nil {
			ks = &KeyStat{Key: k}
			byKey[k] = ks
		}
		ks.Count++
		ks.Bytes += c.RespBytes()
		if ks.ByStep == nil {
			ks.ByStep = map[string]float64{}
		}
		ks.ByStep[phase(c.Start)] += 1 / n
		durByKey[k] += c.Done().Sub(c.Start)
	}
	rs.PerNode = float64(rs.Total) / n
	rs.ReadsPerNode = float64(rs.Reads) / n
	rs.WritesPerNode = float64(rs.Writes) / n
	rs.WatchesPerNode = float64(rs.Watches) / n
	rs.ExecsPerNode = float64(rs.Execs) / n
	rs.LoopPerNode = float64(rs.Loop) / n
	rs.PodListsPerNode = float64(rs.PodLists) / n
	for _, sel := range selOrder {
		ps := listBySel[sel]
		ps.MeanKiB /= float64(ps.Count)
		rs.PodListSelectors = append(rs.PodListSelectors, *ps)
	}
	rs.LoopAPIS = union(apiIntervals).Seconds()
	for k, ks := range byKey {
		ks.PerNode = float64(ks.Count) / n
		ks.MeanMS = ms(durByKey[k]) / float64(ks.Count)
		ks.TotalPerNodeS = durByKey[k].Seconds() / n
		rs.Breakdown = append(rs.Breakdown, *ks)
	}
	sort.Slice(rs.Breakdown, func(i, j int) bool {
		if rs.Breakdown[i].Count != rs.Breakdown[j].Count {
			return rs.Breakdown[i].Count > rs.Breakdown[j].Count
		}
		return rs.Breakdown[i].Key < rs.Breakdown[j].Key
	})
	a.Requests = rs

	// nodetool calls.
	a.Execs = execStats(r.Execs, n)

	// Reaction latency: from a state change to the plugin's next write. The change is
	// dated at its first sighting: the observer's (sim poll, pod watch), or the plugin's
	// own when earlier (data on its watch of the pod, a 404 on its GET of the pod, its
	// decommission call returning). The next write is the first one the plugin sent once
	// it could have seen the change (after its own sighting when known), so that a write
	// already under way for the previous step does not count as a reaction; lease
	// renewals react to nothing and are left out. Also kept: the time to the checkpoint
	// write that records the step which waited for the change.
	var writes []*Call
	for _, c := range r.Calls {
		if c.Class == ClassWrite && !renewal[c] {
			writes = append(writes, c)
		}
	}
	sort.Slice(writes, func(i, j int) bool { return writes[i].Start.Before(writes[j].Start) })
	doneWrite := map[string]*Call{}
	for _, w := range cps {
		for _, st := range w.steps {
			if st.State == "done" && doneWrite[st.ID] == nil {
				doneWrite[st.ID] = w.call
			}
		}
	}
	pluginSaw := map[string]time.Time{}
	saw := func(key string, t time.Time) {
		if old, ok := pluginSaw[key]; !ok || t.Before(old) {
			pluginSaw[key] = t
		}
	}
	for _, c := range r.Calls {
		if c.Resource != "pods" || c.Group != "" {
			continue
		}
		switch {
		case c.Verb == "watch":
			pod, ok := strings.CutPrefix(c.Query.Get("fieldSelector"), "metadata.name=")
			// The plugin stops watching at the DELETED event: the last data is that event.
			if reads := c.DataReads(); ok && len(reads) > 0 {
				saw("gone/"+pod, reads[len(reads)-1])
			}
		case c.Verb == "get" && c.Status == 404:
			saw("gone/"+c.Name, c.End)
		}
	}
	for _, e := range r.Execs {
		if strings.HasPrefix(e.Command, "nodetool decommission") && e.Err == "" {
			saw("decommissioned/"+e.Pod, e.End)
		}
	}
	a.LatencyBetween = map[string]map[string]float64{}
	count := map[string]int{}
	sample := func(kind, pod, stepID string, observed time.Time, seen bool) {
		t, src := observed, "observer"
		pt, pok := pluginSaw[kind+"/"+pod]
		if pok && (!seen || pt.Before(t)) {
			t, src, seen = pt, "plugin", true
		}
		if !seen {
			a.LatencyMissing++
			return
		}
		from := t
		if pok && pt.After(from) {
			from = pt
		}
		i := sort.Search(len(writes), func(i int) bool { return !writes[i].Start.Before(from) })
		if i == len(writes) {
			a.LatencyMissing++
			return
		}
		w := writes[i]
		ls := LatencySample{Kind: kind, Pod: pod, Source: src, MS: ms(w.Start.Sub(t)), NextWrite: w.Key()}
		if rw := doneWrite[stepID]; rw != nil {
			ls.RecordedMS = ms(rw.Start.Sub(t))
		}
		if a.LatencyBetween[kind] == nil {
			a.LatencyBetween[kind] = map[string]float64{}
		}
		count[kind]++
		for _, c := range r.Calls {
			if !c.Start.Before(t) && c.Start.Before(w.Start) {
				ls.Between = append(ls.Between, c.Key())
				a.LatencyBetween[kind][c.Key()]++
			}
		}
		a.LatencySamples = append(a.LatencySamples, ls)
		if kind == "decommissioned" {
			a.LatencyDecommissionedMS = append(a.LatencyDecommissionedMS, ls.MS)
		} else {
			a.LatencyPodGoneMS = append(a.LatencyPodGoneMS, ls.MS)
		}
		a.LatencyRecordedMS = append(a.LatencyRecordedMS, ls.RecordedMS)
	}
	for _, pod := range removedPods(r) {
		t, ok := r.Obs.Decommissioned[pod]
		sample("decommissioned", pod, "decommission/"+pod, t, ok)
		t, ok = r.Obs.PodGone[pod]
		sample("gone", pod, "wait-pod-gone/"+pod, t, ok)
	}
	for kind, m := range a.LatencyBetween {
		for k := range m {
			m[k] /= float64(count[kind])
		}
	}
	if len(r.Calls) <= maxTimeline {
		a.Timeline = timeline(r)
	}
	return a
}

// maxTimeline: runs with more requests than this get no timeline (2→1 makes about 45).
const maxTimeline = 80

// timeline lists r's requests and nodetool calls by start time; an exec's request is
// replaced by the whole call (its request ends when the stream opens).
func timeline(r *ScaleRun) []string {
	type ev struct {
		start, end time.Time
		key        string
	}
	var evs []ev
	for _, c := range r.Calls {
		if c.Verb == "exec" {
			continue
		}
		key := c.Key()
		if w, ok := parseCPWrite(c); ok {
			key += " (checkpoint: " + w.what() + ")"
		}
		if c.Status >= 300 || c.Err != "" {
			key += fmt.Sprintf(" → %d %s", c.Status, c.Err)
		}
		evs = append(evs, ev{c.Start, c.End, key})
	}
	for _, x := range r.Execs {
		evs = append(evs, ev{x.Start, x.End, "EXEC " + x.Command + " on " + x.Pod})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].start.Before(evs[j].start) })
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, fmt.Sprintf("+%.0f–%.0f ms %s", ms(e.start.Sub(r.Start)), ms(e.end.Sub(r.Start)), e.key))
	}
	return out
}

// stepShares attributes the loop's wall time to step kinds: each step gets the time
// from the previous step's "done" write to its own.
func stepShares(cps []cpWrite, n float64) []StepShare {
	if len(cps) == 0 || len(cps[0].steps) == 0 {
		return nil
	}
	doneAt := map[string]time.Time{}
	for _, w := range cps {
		for _, s := range w.steps {
			if s.State == "done" {
				if _, ok := doneAt[s.ID]; !ok {
					doneAt[s.ID] = w.call.Start
				}
			}
		}
	}
	prev := cps[0].call.Start
	perKind := map[string]time.Duration{}
	var order []string
	for _, s := range cps[0].steps {
		t, ok := doneAt[s.ID]
		if !ok {
			continue
		}
		if _, seen := perKind[s.Kind]; !seen {
			order = append(order, s.Kind)
		}
		perKind[s.Kind] += t.Sub(prev)
		prev = t
	}
	var out []StepShare
	for _, k := range order {
		out = append(out, StepShare{Kind: k, PerNodeS: perKind[k].Seconds() / n})
	}
	return out
}

func execStats(execs []ExecTiming, n float64) []ExecStat {
	type acc struct {
		durs       []float64
		concurrent int
	}
	by := map[string]*acc{}
	var decomm []ExecTiming
	for _, e := range execs {
		if strings.HasPrefix(e.Command, "nodetool decommission") {
			decomm = append(decomm, e)
		}
	}
	for _, e := range execs {
		x := by[e.Command]
		if x == nil {
			x = &acc{}
			by[e.Command] = x
		}
		x.durs = append(x.durs, ms(e.End.Sub(e.Start)))
		for _, d := range decomm {
			if d.Pod == e.Pod && e.Start.After(d.Start) && e.End.Before(d.End) {
				x.concurrent++
				break
			}
		}
	}
	var out []ExecStat
	for cmd, x := range by {
		out = append(out, ExecStat{Command: cmd, Count: len(x.durs), PerNode: float64(len(x.durs)) / n, MeanMS: mean(x.durs), P50MS: Percentile(x.durs, 50), Concurrent: x.concurrent})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// union is the total length of the union of the intervals.
func union(iv [][2]time.Time) time.Duration {
	sort.Slice(iv, func(i, j int) bool { return iv[i][0].Before(iv[j][0]) })
	var total time.Duration
	var curS, curE time.Time
	for i, x := range iv {
		if i == 0 || x[0].After(curE) {
			total += curE.Sub(curS)
			curS, curE = x[0], x[1]
			continue
		}
		if x[1].After(curE) {
			curE = x[1]
		}
	}
	return total + curE.Sub(curS)
}

// removedPods are the pods a scale-down From→To removes (highest ordinal first).
func removedPods(r *ScaleRun) []string {
	var out []string
	for i := r.From - 1; i >= r.To; i-- {
		out = append(out, ClusterName+"-dc1-rack1-"+strconv.Itoa(i))
	}
	return out
}

// Percentile is the nearest-rank percentile p (0-100) of xs (NaN when empty).
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	if rank < 1 {
		rank = 1
	}
	if rank > len(s) {
		rank = len(s)
	}
	return s[rank-1]
}

// Median is the 50th percentile, interpolated between the middle two for an even count.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var t float64
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
