package bench

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// These test the harness's bookkeeping only; the benchmarks themselves run with
// `make bench`, never in `make test`.

func TestClassify(t *testing.T) {
	cases := []struct {
		method, url                    string
		class, verb, res, name, sub, k string
	}{
		{"GET", "/api", ClassRead, "discovery", "", "", "", "GET discovery /api"},
		{"GET", "/apis/db.orange.com/v2", ClassRead, "discovery", "", "", "", "GET discovery /apis/db.orange.com/v2"},
		{"GET", "/api/v1/namespaces/ns/pods?labelSelector=a%3Db", ClassRead, "list", "pods", "", "", "LIST pods"},
		{"GET", "/api/v1/namespaces/ns/pods?watch=true&fieldSelector=metadata.name%3Dp", ClassWatch, "watch", "pods", "", "", "WATCH pods"},
		{"GET", "/api/v1/namespaces/ns/pods/p-0", ClassRead, "get", "pods", "p-0", "", "GET pods/NAME"},
		{"GET", "/api/v1/namespaces/ns/pods/p-0/exec?command=env&command=LANG%3DC&command=nodetool&command=netstats", ClassExec, "exec", "pods", "p-0", "exec", "EXEC nodetool netstats"},
		{"POST", "/api/v1/namespaces/ns/pods/p-0/exec?command=nodetool&command=decommission", ClassExec, "exec", "pods", "p-0", "exec", "EXEC nodetool decommission"},
		{"PATCH", "/apis/db.orange.com/v2/namespaces/ns/cassandraclusters/c", ClassWrite, "patch", "cassandraclusters", "c", "", "PATCH cassandraclusters"},
		{"PATCH", "/apis/apps/v1/namespaces/ns/statefulsets/s", ClassWrite, "patch", "statefulsets", "s", "", "PATCH statefulsets"},
		{"DELETE", "/api/v1/namespaces/ns/persistentvolumeclaims/data-p-1", ClassWrite, "delete", "persistentvolumeclaims", "data-p-1", "", "DELETE persistentvolumeclaims"},
		{"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ClassRead, "create", "selfsubjectaccessreviews", "", "", "POST selfsubjectaccessreviews"},
		{"GET", "/api/v1/namespaces/ns", ClassRead, "get", "namespaces", "ns", "", "GET namespaces/NAME"},
		{"PUT", "/apis/db.orange.com/v2/namespaces/ns/cassandraclusters/c/status", ClassWrite, "update", "cassandraclusters", "c", "status", "PUT cassandraclusters/status"},
	}
	for _, c := range cases {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		got := Classify(c.method, u)
		if got.Class != c.class || got.Verb != c.verb || got.Resource != c.res || got.Name != c.name || got.Subresource != c.sub || got.Key() != c.k {
			t.Errorf("%s %s: got class=%s verb=%s res=%s name=%s sub=%s key=%q", c.method, c.url, got.Class, got.Verb, got.Resource, got.Name, got.Subresource, got.Key())
		}
	}
}

func TestRecorderKeepsCheckpointBodiesAndCountsBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 100)))
	}))
	defer srv.Close()
	rec := &Recorder{}
	var seen []string
	rec.OnCall = func(c *Call) { seen = append(seen, c.Key()) }
	client := &http.Client{Transport: rec.Wrap(http.DefaultTransport)}
	body := `{"metadata":{"annotations":{"a":"b"}}}`
	req, _ := http.NewRequest(http.MethodPatch, srv.URL+"/apis/db.orange.com/v2/namespaces/n/cassandraclusters/c", strings.NewReader(body))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1000)
	n := 0
	for {
		k, err := resp.Body.Read(buf[n:])
		n += k
		if err != nil {
			break
		}
	}
	_ = resp.Body.Close()
	calls := rec.Calls()
	if len(calls) != 1 || string(calls[0].ReqBody) != body || calls[0].RespBytes() != 100 || calls[0].Status != 200 || n != 100 {
		t.Fatalf("calls %+v, read %d", calls, n)
	}
	if len(seen) != 1 || seen[0] != "PATCH cassandraclusters" {
		t.Fatalf("OnCall saw %v", seen)
	}
}

func TestPercentileAndMedian(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	if got := Percentile(xs, 50); got != 3 {
		t.Errorf("p50 = %v", got)
	}
	if got := Percentile(xs, 99); got != 5 {
		t.Errorf("p99 = %v", got)
	}
	if got := Percentile(xs, 0); got != 1 {
		t.Errorf("p0 = %v", got)
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median = %v", got)
	}
	if !math.IsNaN(Percentile(nil, 50)) || !math.IsNaN(Median(nil)) {
		t.Error("empty input must give NaN")
	}
}

func TestParseMicro(t *testing.T) {
	raw := `goos: linux
goarch: amd64
pkg: github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint
BenchmarkEncode100-2   	    4063	    290010 ns/op	  123456 B/op	     310 allocs/op
BenchmarkEncode100-2   	    4063	    310010 ns/op	  123456 B/op	     310 allocs/op
BenchmarkDecode100-2   	    1000	   1000000 ns/op
PASS
ok  	github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint	3.1s
`
	got := ParseMicro(raw)
	if len(got) != 2 || got[0].Name != "BenchmarkEncode100" || got[0].MedianNs != 300010 || got[0].AllocsPerOp != 310 || got[1].MedianNs != 1e6 {
		t.Fatalf("%+v", got)
	}
}

func TestCutTimeMarker(t *testing.T) {
	rest, rss := cutTimeMarker("progress\n" + timeMarker + "41234\n")
	if rss != 41234*1024 || rest != "progress\n" {
		t.Fatalf("%q %d", rest, rss)
	}
}

// A fake run: two steps of one node, a lease renewal in between, and the observer's
// timestamps; the analysis must attribute time to step kinds, skip the renewal as a
// reaction, and compute overhead and latencies.
func TestAnalyze(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	cp := func(states ...string) []byte {
		steps := []map[string]any{
			{"id": "decommission/bench-dc1-rack1-1", "kind": "decommission", "pod": "bench-dc1-rack1-1", "state": states[0]},
			{"id": "wait-pod-gone/bench-dc1-rack1-1", "kind": "wait-pod-gone", "pod": "bench-dc1-rack1-1", "state": states[1]},
		}
		v, _ := json.Marshal(map[string]any{"steps": steps})
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{annCheckpoint: string(v)}}})
		return b
	}
	finish, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{annCheckpoint: nil}}})
	patch := func(ms int, body []byte) *Call {
		u, _ := url.Parse("/apis/db.orange.com/v2/namespaces/n/cassandraclusters/bench")
		c := Classify(http.MethodPatch, u)
		c.Start, c.End, c.ReqBody = at(ms), at(ms+5), body
		return c
	}
	get := func(ms int) *Call {
		u, _ := url.Parse("/api/v1/namespaces/n/pods/bench-dc1-rack1-1")
		c := Classify(http.MethodGet, u)
		c.Start, c.End = at(ms), at(ms+2)
		return c
	}
	r := &ScaleRun{Mode: ModeInProcess, From: 2, To: 1, Decommission: time.Second, Start: at(0), End: at(3000)}
	r.Calls = []*Call{
		get(10),
		patch(100, cp("pending", "pending")),  // create
		patch(150, cp("started", "pending")),  // decommission started
		patch(1300, cp("started", "pending")), // lease renewal: nothing changed
		get(1320),
		patch(1350, cp("done", "pending")),
		patch(2500, cp("done", "done")),
		patch(2900, finish),
	}
	r.Obs = Observed{
		Decommissioned: map[string]time.Time{"bench-dc1-rack1-1": at(1250)},
		Shrunk:         map[string]time.Time{"bench-dc1-rack1-1": at(1600)},
		PodGone:        map[string]time.Time{"bench-dc1-rack1-1": at(2480)},
	}
	a := Analyze(r)
	if math.Abs(a.OverheadS-(3-1-0.88)) > 1e-9 || a.OverheadPerNodeS != a.OverheadS {
		t.Errorf("overhead %v", a.OverheadS)
	}
	if len(a.LatencyDecommissionedMS) != 1 || a.LatencyDecommissionedMS[0] != 100 {
		t.Errorf("latency after DECOMMISSIONED %v (the renewal at +50 ms is no reaction)", a.LatencyDecommissionedMS)
	}
	if len(a.LatencyPodGoneMS) != 1 || a.LatencyPodGoneMS[0] != 20 {
		t.Errorf("latency after pod gone %v", a.LatencyPodGoneMS)
	}
	if a.Requests.LeaseRenewals != 1 || a.Requests.Total != 8 || a.Requests.Startup != 1 || a.Requests.Loop != 7 {
		t.Errorf("requests %+v", a.Requests)
	}
	want := []StepShare{{"decommission", 1.25}, {"wait-pod-gone", 1.15}}
	if len(a.StepShares) != 2 || math.Abs(a.StepShares[0].PerNodeS-want[0].PerNodeS) > 1e-9 || math.Abs(a.StepShares[1].PerNodeS-want[1].PerNodeS) > 1e-9 {
		t.Errorf("step shares %+v, want %+v", a.StepShares, want)
	}
}

// TestMarginalWhy: the per-node breakdown is the difference between the two runs over
// the extra removed nodes, largest first, each with its reason; a kind without one is
// named as the place to look.
func TestMarginalWhy(t *testing.T) {
	run := func(removed int, counts map[string]int) *ScaleAnalysis {
		rs := &RequestStats{}
		for k, n := range counts {
			rs.Breakdown = append(rs.Breakdown, KeyStat{Key: k, Count: n})
		}
		return &ScaleAnalysis{Removed: removed, Requests: rs}
	}
	lo := run(9, map[string]int{"EXEC nodetool status": 20, "GET cassandraclusters/NAME": 25, "POST selfsubjectaccessreviews": 9})
	hi := run(99, map[string]int{"EXEC nodetool status": 200, "GET cassandraclusters/NAME": 205, "POST selfsubjectaccessreviews": 9})
	got := marginalWhy(lo, hi)
	want := "per removed node: EXEC nodetool status 2.0 (" + requestReasons["EXEC nodetool status"] + "); GET cassandraclusters/NAME 2.0 (" + requestReasons["GET cassandraclusters/NAME"] + "). Each is"
	if !strings.HasPrefix(got, want) {
		t.Fatalf("got  %s\nwant %s…", got, want)
	}
	hi.Requests.Breakdown = append(hi.Requests.Breakdown, KeyStat{Key: "GET secrets/NAME", Count: 90})
	if got := marginalWhy(lo, hi); !strings.HasSuffix(got, "look there first: GET secrets/NAME") {
		t.Fatalf("an unexplained kind is not named: %s", got)
	}
}
