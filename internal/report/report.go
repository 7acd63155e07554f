// Package report builds the diagnostics archive of one cluster (`kubectl cassandra
// report`): its resources, events, operator, nodetool views and the plugin's own records,
// with secret-looking values redacted and every read that failed listed with its reason.
package report

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// nodetoolCommands are read on every pod, in this order.
var nodetoolCommands = []string{"status", "info", "netstats", "describecluster"}

// Operator names an operator Deployment to include.
type Operator struct{ Namespace, Name string }

// Config is what Build reads and how.
type Config struct {
	Kube kubernetes.Interface
	// Namespace and Name are the cluster's; Kind its resource kind ("CassandraCluster").
	Namespace, Name, Kind string
	// Cluster reads the cluster resource (with its status).
	Cluster func(ctx context.Context) (*unstructured.Unstructured, error)
	// Selector selects the cluster's StatefulSets, pods and PVCs (the operator's labels).
	Selector string
	// Operators finds the operator Deployments to include (nil: none).
	Operators func(ctx context.Context) ([]Operator, error)
	// LogLines is how many of the last lines of each operator pod's log go in.
	LogLines int64
	// Nodetool runs a read-only nodetool command on a pod (nil: nodetool is skipped).
	Nodetool func(ctx context.Context, pod string, args ...string) (stdout, stderr string, err error)
	// Records decodes the plugin's own annotations of the cluster resource into files
	// (the checkpoint, the last operation), or says why one cannot be read.
	Records func(u *unstructured.Unstructured) (files map[string]any, unreadable map[string]error)
	// Related reads the operator's own objects about the cluster (cass-operator: its
	// CassandraTasks), by kind (nil: none).
	Related func(ctx context.Context) (map[string][]unstructured.Unstructured, error)
	// Version is the plugin's version information.
	Version any
	// Secrets are values known to be secret (the JMX password): masked wherever they
	// would appear.
	Secrets func(ctx context.Context) []string
	Now     func() time.Time
}

// Unreadable is something that could not go into the archive, and why.
type Unreadable struct {
	What  string `json:"what"`
	Error string `json:"error"`
}

// File is one file of the archive.
type File struct {
	Name string `json:"name"`
	Size int    `json:"size"`
	data []byte
}

// Counts says what went in, for the summary.
type Counts struct {
	StatefulSets, Pods, PVCs, PVs, Events int
	// Operators are "namespace/name" with the number of pods whose logs went in.
	Operators map[string]int
	// NodetoolPods is how many pods answered at least one nodetool command.
	NodetoolPods int
	Nodetool     bool
	Records      []string
}

// Report is a built archive, not yet written.
type Report struct {
	Cluster    string       `json:"cluster"`
	CreatedAt  string       `json:"createdAt"`
	Files      []File       `json:"files"`
	Unreadable []Unreadable `json:"unreadable"`
	Redacted   []Redaction  `json:"redacted"`
	Counts     Counts       `json:"-"`
	LogLines   int64        `json:"-"`
	now        time.Time
	prefix     string
}

type builder struct {
	cfg Config
	mu  sync.Mutex
	rep *Report
	red *redactor
	// texts are free-text files, masked with every redacted value at the end.
	texts map[string]string
}

func (b *builder) fail(what string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rep.Unreadable = append(b.rep.Unreadable, Unreadable{What: what, Error: err.Error()})
}

// object adds v (any API object) as YAML, redacted.
func (b *builder) object(name, desc string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		b.fail(name, err)
		return
	}
	var m any
	_ = json.Unmarshal(raw, &m)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.red.object(desc, m)
	out, _ := yaml.Marshal(m)
	b.rep.Files = append(b.rep.Files, File{Name: name, data: out})
}

// items adds each item of a list as its own redacted object, into one YAML file.
func (b *builder) items(name, kind string, items []any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var docs []string
	for _, it := range items {
		raw, _ := json.Marshal(it)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		md, _ := m["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		n, _ := md["name"].(string)
		obj := kind + " " + n
		if ns != "" {
			obj = kind + " " + ns + "/" + n
		}
		m["kind"] = kind
		b.red.object(obj, m)
		out, _ := yaml.Marshal(m)
		docs = append(docs, string(out))
	}
	b.rep.Files = append(b.rep.Files, File{Name: name, data: []byte(strings.Join(docs, "---\n"))})
}

func (b *builder) text(name, s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.texts[name] = s
}

// Build reads everything; a read that fails is listed in the report, never fatal.
func Build(ctx context.Context, cfg Config) *Report {
	b := newBuilder(cfg)
	b.cluster(ctx)
	if cfg.Version != nil {
		b.jsonFile("version.json", cfg.Version)
	}
	b.related(ctx)
	pods, events, eventsErr := b.workloads(ctx)
	if eventsErr != nil {
		b.fail("Events", eventsErr)
	} else {
		b.events("events/"+strings.ToLower(cfg.Kind)+"-"+cfg.Name+".txt", events, cfg.Kind, cfg.Name)
		for _, p := range pods {
			b.events("events/pod-"+p.Name+".txt", events, "Pod", p.Name)
		}
	}
	together(
		func() { b.operators(ctx) },
		func() { b.nodetool(ctx, pods) },
	)
	if cfg.Secrets != nil {
		for _, s := range cfg.Secrets(ctx) {
			b.red.keep(s)
		}
	}
	b.finish()
	return b.rep
}

// related adds the operator's own objects about the cluster, one file per kind.
func (b *builder) related(ctx context.Context) {
	if b.cfg.Related == nil {
		return
	}
	byKind, err := b.cfg.Related(ctx)
	if err != nil {
		b.fail("the operator's own objects", err)
	}
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		b.items(strings.ToLower(kind)+"s.yaml", kind, anys(byKind[kind]))
	}
}

func newBuilder(cfg Config) *builder {
	now := cfg.Now()
	rep := &Report{
		Cluster:    cfg.Namespace + "/" + cfg.Name,
		CreatedAt:  now.UTC().Format(time.RFC3339),
		Unreadable: []Unreadable{},
		Redacted:   []Redaction{},
		Counts:     Counts{Operators: map[string]int{}, Nodetool: cfg.Nodetool != nil},
		LogLines:   cfg.LogLines,
		now:        now,
		prefix:     cfg.Name + "-report/",
	}
	return &builder{cfg: cfg, rep: rep, red: &redactor{}, texts: map[string]string{}}
}

// jsonFile adds v as indented JSON, a free text (masked at the end).
func (b *builder) jsonFile(name string, v any) {
	out, _ := json.MarshalIndent(v, "", "  ")
	b.text(name, string(out)+"\n")
}

// cluster adds the cluster resource and the plugin's records kept on it.
func (b *builder) cluster(ctx context.Context) {
	cfg := b.cfg
	u, err := cfg.Cluster(ctx)
	if err != nil {
		b.fail(cfg.Kind+" "+b.rep.Cluster, err)
		return
	}
	b.object("cluster.yaml", cfg.Kind+" "+cfg.Namespace+"/"+cfg.Name, u.Object)
	if cfg.Records == nil {
		return
	}
	files, bad := cfg.Records(u)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.jsonFile(n, files[n])
		b.rep.Counts.Records = append(b.rep.Counts.Records, strings.TrimSuffix(n, ".json"))
	}
	for n, e := range bad {
		b.fail(n, e)
	}
}

// workloads adds the cluster's StatefulSets, pods and claims, and lists the
// namespace's events (one list, sorted out by the caller: by the cluster resource, by
// pod), all at once.
func (b *builder) workloads(ctx context.Context) (pods []corev1.Pod, events []corev1.Event, eventsErr error) {
	kc, ns, sel := b.cfg.Kube, b.cfg.Namespace, metav1.ListOptions{LabelSelector: b.cfg.Selector}
	together(
		func() {
			l, err := kc.AppsV1().StatefulSets(ns).List(ctx, sel)
			if err != nil {
				b.fail("StatefulSets", err)
				return
			}
			b.rep.Counts.StatefulSets = len(l.Items)
			b.items("statefulsets.yaml", "StatefulSet", anys(l.Items))
		},
		func() {
			l, err := kc.CoreV1().Pods(ns).List(ctx, sel)
			if err != nil {
				b.fail("Pods", err)
				return
			}
			pods = l.Items
			b.rep.Counts.Pods = len(l.Items)
			b.items("pods.yaml", "Pod", anys(l.Items))
		},
		func() { b.claims(ctx) },
		func() {
			l, err := kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				eventsErr = err
				return
			}
			events = l.Items
		},
	)
	return pods, events, eventsErr
}

// together runs fs at once and waits for them all.
func together(fs ...func()) {
	var wg sync.WaitGroup
	wg.Add(len(fs))
	for _, f := range fs {
		go func() {
			defer wg.Done()
			f()
		}()
	}
	wg.Wait()
}

// claims adds the cluster's PVCs and the PVs bound to them.
func (b *builder) claims(ctx context.Context) {
	kc, ns := b.cfg.Kube, b.cfg.Namespace
	l, err := kc.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: b.cfg.Selector})
	if err != nil {
		b.fail("PersistentVolumeClaims", err)
		return
	}
	var items, pvs []any
	for _, c := range l.Items {
		items = append(items, c)
		if c.Spec.VolumeName == "" {
			continue
		}
		pv, err := kc.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			b.fail("PersistentVolume "+c.Spec.VolumeName+" (of "+c.Name+")", err)
			continue
		}
		pvs = append(pvs, pv)
	}
	b.rep.Counts.PVCs = len(items)
	b.items("pvcs.yaml", "PersistentVolumeClaim", items)
	if len(pvs) > 0 {
		b.rep.Counts.PVs = len(pvs)
		b.items("pvs.yaml", "PersistentVolume", pvs)
	}
}

// events writes the events about one object, oldest first, as kubectl prints them.
func (b *builder) events(name string, all []corev1.Event, kind, obj string) {
	var mine []corev1.Event
	for _, e := range all {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == obj {
			mine = append(mine, e)
		}
	}
	sort.SliceStable(mine, func(i, j int) bool { return eventTime(mine[i]).Before(eventTime(mine[j])) })
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "LAST SEEN\tTYPE\tREASON\tCOUNT\tFROM\tMESSAGE")
	for _, e := range mine {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", eventTime(e).UTC().Format(time.RFC3339), e.Type, e.Reason, max(e.Count, 1), e.Source.Component, strings.ReplaceAll(e.Message, "\n", " "))
	}
	_ = tw.Flush()
	b.mu.Lock()
	b.rep.Counts.Events += len(mine)
	b.mu.Unlock()
	b.text(name, buf.String())
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// operators adds each operator Deployment and the last lines of its pods' logs.
func (b *builder) operators(ctx context.Context) {
	if b.cfg.Operators == nil {
		return
	}
	ops, err := b.cfg.Operators(ctx)
	if err != nil {
		b.fail("operator Deployments", err)
	}
	kc := b.cfg.Kube
	for _, op := range ops {
		key := op.Namespace + "/" + op.Name
		dir := "operator/" + op.Namespace + "-" + op.Name + "/"
		d, err := kc.AppsV1().Deployments(op.Namespace).Get(ctx, op.Name, metav1.GetOptions{})
		if err != nil {
			b.fail("operator Deployment "+key, err)
			continue
		}
		b.object(dir+"deployment.yaml", "Deployment "+key, d)
		b.mu.Lock()
		b.rep.Counts.Operators[key] = 0
		b.mu.Unlock()
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			b.fail("operator pods of "+key, err)
			continue
		}
		pl, err := kc.CoreV1().Pods(op.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			b.fail("operator pods of "+key, err)
			continue
		}
		if len(pl.Items) == 0 {
			b.text(dir+"logs.txt", "(no pod: the Deployment has no running replica)\n")
		}
		for _, p := range pl.Items {
			lines := b.cfg.LogLines
			opts := &corev1.PodLogOptions{TailLines: &lines}
			if len(p.Spec.Containers) > 1 {
				opts.Container = d.Spec.Template.Spec.Containers[0].Name
			}
			raw, err := kc.CoreV1().Pods(op.Namespace).GetLogs(p.Name, opts).DoRaw(ctx)
			if err != nil {
				b.fail("logs of operator pod "+op.Namespace+"/"+p.Name, err)
				continue
			}
			b.text(dir+"logs-"+p.Name+".txt", string(raw))
			b.mu.Lock()
			b.rep.Counts.Operators[key]++
			b.mu.Unlock()
		}
	}
}

// nodetool runs the read-only commands on every running pod, a few pods at a time.
func (b *builder) nodetool(ctx context.Context, pods []corev1.Pod) {
	if b.cfg.Nodetool == nil {
		return
	}
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			b.fail("nodetool on "+p.Name, fmt.Errorf("pod is %s%s, not running", p.Status.Phase, map[bool]string{true: " and terminating"}[p.DeletionTimestamp != nil]))
			continue
		}
		wg.Add(1)
		go func(pod string) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			answered := false
			for _, cmd := range nodetoolCommands {
				out, errOut, err := b.cfg.Nodetool(ctx, pod, cmd)
				s := out
				if errOut != "" {
					s += "\n--- stderr ---\n" + errOut
				}
				if err != nil {
					b.fail("nodetool "+cmd+" on "+pod, err)
					if s == "" {
						continue
					}
				} else {
					answered = true
				}
				b.text("nodetool/"+pod+"/"+cmd+".txt", s)
			}
			if answered {
				b.mu.Lock()
				b.rep.Counts.NodetoolPods++
				b.mu.Unlock()
			}
		}(p.Name)
	}
	wg.Wait()
}

// finish masks the free texts, adds ERRORS.txt and REDACTED.txt, and sorts the files.
func (b *builder) finish() {
	rep := b.rep
	for name, s := range b.texts {
		rep.Files = append(rep.Files, File{Name: name, data: []byte(b.red.text(s))})
	}
	// Messages may quote values (an env value in an error): masked too.
	for i := range rep.Unreadable {
		rep.Unreadable[i].Error = b.red.text(rep.Unreadable[i].Error)
	}
	sort.Slice(rep.Unreadable, func(i, j int) bool { return rep.Unreadable[i].What < rep.Unreadable[j].What })
	rep.Redacted = append(rep.Redacted, b.red.done...)
	sort.Slice(rep.Redacted, func(i, j int) bool {
		if rep.Redacted[i].Object != rep.Redacted[j].Object {
			return rep.Redacted[i].Object < rep.Redacted[j].Object
		}
		return rep.Redacted[i].Field < rep.Redacted[j].Field
	})

	var e strings.Builder
	e.WriteString("# What could not be read, and why (the rest of the archive is complete).\n")
	if len(rep.Unreadable) == 0 {
		e.WriteString("Everything was read.\n")
	}
	for _, u := range rep.Unreadable {
		fmt.Fprintf(&e, "%s: %s\n", u.What, u.Error)
	}
	rep.Files = append(rep.Files, File{Name: "ERRORS.txt", data: []byte(e.String())})

	var r strings.Builder
	r.WriteString(`# Redacted from this archive
Secrets are never read into it. Values whose names look like passwords, tokens or keys
(env variables, object fields) are replaced by REDACTED, kubectl's last-applied-configuration
annotation (a copy of them) is dropped, and each such value, and the JMX password, is also
masked wherever it appears in text (logs, events, nodetool output). Redacted fields:
`)
	if len(rep.Redacted) == 0 {
		r.WriteString("(none)\n")
	}
	for _, x := range rep.Redacted {
		fmt.Fprintf(&r, "%s: %s\n", x.Object, x.Field)
	}
	rep.Files = append(rep.Files, File{Name: "REDACTED.txt", data: []byte(r.String())})

	for i := range rep.Files {
		rep.Files[i].Size = len(rep.Files[i].data)
	}
	sort.Slice(rep.Files, func(i, j int) bool { return rep.Files[i].Name < rep.Files[j].Name })
}

// Index is the archive's table of contents: `report -o json` and index.json.
type Index struct {
	Report
	Archive string `json:"archive"`
}

// Write writes the archive as a gzipped tar, every file under one directory, with
// index.json last.
func (r *Report) Write(w io.Writer, archive string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: r.prefix + name, Mode: 0o600, Size: int64(len(data)), ModTime: r.now, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, f := range r.Files {
		if err := add(f.Name, f.data); err != nil {
			return err
		}
	}
	idx, _ := json.MarshalIndent(r.Index(archive), "", "  ")
	if err := add("index.json", append(idx, '\n')); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// Index is the report's index for the archive file name.
func (r *Report) Index(archive string) Index { return Index{Report: *r, Archive: archive} }

// Summary prints what went in, for stderr.
func (r *Report) Summary(w io.Writer, archive string) {
	c := r.Counts
	fmt.Fprintf(w, "Report of %s written to %s: %d files.\n", r.Cluster, archive, len(r.Files)+1)
	fmt.Fprintf(w, "  resources: the cluster resource (with status), %d StatefulSets, %d pods, %d PVCs, %d PVs, %d events\n", c.StatefulSets, c.Pods, c.PVCs, c.PVs, c.Events)
	if len(c.Records) > 0 {
		fmt.Fprintf(w, "  plugin records: %s\n", strings.Join(c.Records, ", "))
	} else {
		fmt.Fprintln(w, "  plugin records: none (no checkpoint, no last operation)")
	}
	ops := make([]string, 0, len(c.Operators))
	for k, n := range c.Operators {
		ops = append(ops, fmt.Sprintf("%s (Deployment, last %d log lines of %d pods)", k, r.LogLines, n))
	}
	sort.Strings(ops)
	if len(ops) == 0 {
		ops = []string{"none found"}
	}
	fmt.Fprintf(w, "  operator: %s\n", strings.Join(ops, ", "))
	if c.Nodetool {
		fmt.Fprintf(w, "  nodetool %s: %d of %d pods answered\n", strings.Join(nodetoolCommands, ", "), c.NodetoolPods, c.Pods)
	} else {
		fmt.Fprintln(w, "  nodetool: skipped (--nodetool=false)")
	}
	fmt.Fprintf(w, "  redacted: %d fields (REDACTED.txt)\n", len(r.Redacted))
	if len(r.Unreadable) == 0 {
		fmt.Fprintln(w, "  everything was readable")
		return
	}
	fmt.Fprintf(w, "  not readable (%d, in ERRORS.txt):\n", len(r.Unreadable))
	for _, u := range r.Unreadable {
		fmt.Fprintf(w, "    %s: %s\n", u.What, u.Error)
	}
}

// anys is a list's items as the archive writer takes them.
func anys[T any](l []T) []any {
	var out []any
	for _, x := range l {
		out = append(out, x)
	}
	return out
}
