// Package bench measures how little time and load kubectl-cassandra adds, on the real
// local control plane of hack/testenv with the simulated nodetool (test/sim). It is run by
// `make bench` through cmd/kcass-bench and is never part of `make test`.
package bench

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Request classes: what the API server is asked to do.
const (
	ClassRead      = "read"      // GET of one object, LIST, discovery
	ClassWrite     = "write"     // POST/PUT/PATCH/DELETE (not exec)
	ClassWatch     = "watch"     // a watch opened (its events are not requests)
	ClassExec      = "exec"      // pods/exec (one request per nodetool call)
	ClassDiscovery = "discovery" // /api, /apis, /apis/<group>/<version> (counted as reads)
)

// Call is one HTTP request an API client of the plugin made.
type Call struct {
	Seq   int
	Start time.Time // RoundTrip entered (the request leaves)
	End   time.Time // response headers back (for a watch or an exec: the stream opened)

	Method      string
	Path        string
	Query       url.Values
	Class       string // ClassRead, ClassWrite, ClassWatch, ClassExec
	Verb        string // get, list, watch, create, patch, update, delete, exec, discovery
	Group       string // "" for the core group
	Namespace   string
	Resource    string
	Name        string
	Subresource string
	Status      int    // HTTP status (0 on a transport error)
	Err         string // transport error
	// ReqBody is kept for writes to cassandraclusters (the checkpoint patches).
	ReqBody []byte

	respBytes atomic.Int64
	mu        sync.Mutex
	dataReads []time.Time // watches only: when response data arrived (≈ each event)
	bodyDone  time.Time   // when the response body was read to its end or closed
}

// Done is when the response was complete: its body read to the end (or closed), else
// its headers back. For a watch it is when the watch ended.
func (c *Call) Done() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.bodyDone.IsZero() {
		return c.bodyDone
	}
	return c.End
}

// DataReads returns, for a watch, the times at which its response body delivered data
// (each read holds one or more events).
func (c *Call) DataReads() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.dataReads...)
}

// RespBytes is how many response-body bytes the client read (for a watch: so far).
func (c *Call) RespBytes() int64 { return c.respBytes.Load() }

// Key names the kind of request for breakdowns: "GET pods/NAME", "LIST pods",
// "PATCH cassandraclusters", "EXEC nodetool netstats", ...
func (c *Call) Key() string {
	switch c.Verb {
	case "exec":
		return "EXEC " + ExecCommand(c.Query)
	case "discovery":
		return "GET discovery " + c.Path
	}
	res := c.Resource
	if c.Subresource != "" {
		res += "/" + c.Subresource
	}
	switch c.Verb {
	case "get":
		return "GET " + res + "/NAME"
	case "list":
		return "LIST " + res
	case "watch":
		return "WATCH " + res
	case "create":
		return "POST " + res
	case "patch":
		return "PATCH " + res
	case "update":
		return "PUT " + res
	case "delete":
		if c.Name == "" {
			return "DELETECOLLECTION " + res
		}
		return "DELETE " + res
	}
	return c.Method + " " + c.Path
}

// ExecCommand returns the command of a pods/exec request as the user would read it:
// "nodetool netstats" for `env LANG=C JAVA_TOOL_OPTIONS=... nodetool netstats`.
func ExecCommand(q url.Values) string {
	argv := q["command"]
	for i, a := range argv {
		if a == "nodetool" || strings.HasSuffix(a, "/nodetool") {
			return "nodetool " + strings.Join(argv[i+1:], " ")
		}
	}
	return strings.Join(argv, " ")
}

// Recorder is an http.RoundTripper wrapper (cli.Options.WrapTransport) that records every
// request of every API client it wraps.
type Recorder struct {
	// OnCall, when set, is called (synchronously, keep it short) when a request is sent.
	OnCall func(c *Call)

	mu    sync.Mutex
	calls []*Call
	seq   int
}

// Wrap is the WrapTransport hook.
func (r *Recorder) Wrap(rt http.RoundTripper) http.RoundTripper {
	return &recordingRT{r: r, next: rt}
}

// Calls returns the calls recorded so far, in the order they were sent.
func (r *Recorder) Calls() []*Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Call(nil), r.calls...)
}

// Reset forgets every call.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}

type recordingRT struct {
	r    *Recorder
	next http.RoundTripper
}

func (t *recordingRT) RoundTrip(req *http.Request) (*http.Response, error) {
	c := Classify(req.Method, req.URL)
	if c.Class == ClassWrite && c.Resource == "cassandraclusters" && req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		c.ReqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	c.Start = time.Now()
	t.r.mu.Lock()
	t.r.seq++
	c.Seq = t.r.seq
	t.r.calls = append(t.r.calls, c)
	t.r.mu.Unlock()
	if t.r.OnCall != nil {
		t.r.OnCall(c)
	}
	resp, err := t.next.RoundTrip(req)
	c.End = time.Now()
	if err != nil {
		c.Err = err.Error()
		return resp, err
	}
	c.Status = resp.StatusCode
	if resp.Body != nil && resp.Body != http.NoBody {
		resp.Body = &countingBody{ReadCloser: resp.Body, c: c}
	}
	return resp, nil
}

type countingBody struct {
	io.ReadCloser
	c *Call
}

// maxDataReads bounds what a long-lived watch keeps.
const maxDataReads = 10000

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.c.respBytes.Add(int64(n))
		if b.c.Class == ClassWatch {
			t := time.Now()
			b.c.mu.Lock()
			if len(b.c.dataReads) < maxDataReads {
				b.c.dataReads = append(b.c.dataReads, t)
			}
			b.c.mu.Unlock()
		}
	}
	if err != nil {
		b.done()
	}
	return n, err
}

func (b *countingBody) Close() error {
	err := b.ReadCloser.Close()
	b.done()
	return err
}

func (b *countingBody) done() {
	t := time.Now()
	b.c.mu.Lock()
	if b.c.bodyDone.IsZero() {
		b.c.bodyDone = t
	}
	b.c.mu.Unlock()
}

// Classify parses a request to the Kubernetes API into a Call (without times).
func Classify(method string, u *url.URL) *Call {
	c := &Call{Method: method, Path: u.Path, Query: u.Query()}
	seg := strings.Split(strings.Trim(u.Path, "/"), "/")
	var rest []string
	switch {
	case len(seg) >= 1 && seg[0] == "api":
		// /api, /api/v1, /api/v1/...
		if len(seg) <= 2 {
			c.Class, c.Verb = ClassRead, "discovery"
			return c
		}
		rest = seg[2:]
	case len(seg) >= 1 && seg[0] == "apis":
		// /apis, /apis/g, /apis/g/v, /apis/g/v/...
		if len(seg) <= 3 {
			c.Class, c.Verb = ClassRead, "discovery"
			return c
		}
		c.Group = seg[1]
		rest = seg[3:]
	default:
		c.Class, c.Verb = ClassRead, "other"
		if method != http.MethodGet {
			c.Class = ClassWrite
		}
		return c
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		c.Namespace = rest[1]
		rest = rest[2:]
	}
	c.Resource = rest[0]
	if len(rest) > 1 {
		c.Name = rest[1]
	}
	if len(rest) > 2 {
		c.Subresource = strings.Join(rest[2:], "/")
	}
	if c.Subresource == "exec" || c.Subresource == "attach" {
		c.Class, c.Verb = ClassExec, "exec"
		return c
	}
	switch method {
	case http.MethodGet:
		switch {
		case c.Query.Get("watch") == "true" || c.Query.Get("watch") == "1":
			c.Class, c.Verb = ClassWatch, "watch"
		case c.Name == "":
			c.Class, c.Verb = ClassRead, "list"
		default:
			c.Class, c.Verb = ClassRead, "get"
		}
	case http.MethodPost:
		c.Class, c.Verb = ClassWrite, "create"
		if strings.HasSuffix(c.Resource, "accessreviews") || strings.HasSuffix(c.Resource, "reviews") {
			// SelfSubjectAccessReview & co. are questions, not writes: nothing is stored.
			c.Class = ClassRead
		}
	case http.MethodPatch:
		c.Class, c.Verb = ClassWrite, "patch"
	case http.MethodPut:
		c.Class, c.Verb = ClassWrite, "update"
	case http.MethodDelete:
		c.Class, c.Verb = ClassWrite, "delete"
	default:
		c.Class, c.Verb = ClassRead, strings.ToLower(method)
	}
	return c
}
