package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

const (
	jmxUser     = "cassandra-jmx"
	jmxPassword = "jmx-Pa55word-0xC0FFEE"
	envPassword = "hunter2-env-password"
)

// withJMX turns on JMX authentication in the simulated Cassandra and adds the Secret
// "cassandra-jmx" holding its credentials.
func withJMX(t *testing.T, w *world.World) {
	t.Helper()
	if err := w.Cass.SetJMXAuth(&sim.JMXAuth{Username: jmxUser, Password: jmxPassword}); err != nil {
		t.Fatal(err)
	}
	if err := w.Kube.Tracker().Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cassandra-jmx", Namespace: w.NS},
		Data: map[string][]byte{"username": []byte(jmxUser), "password": []byte(jmxPassword)}}); err != nil {
		t.Fatal(err)
	}
}

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// withSecretEnv gives every pod and StatefulSet template a cassandra container whose env
// holds CASSANDRA_PASSWORD (a value) and JMX_PASSWORD (a secretKeyRef: no value).
func withSecretEnv(t *testing.T, w *world.World) {
	t.Helper()
	c := corev1.Container{Name: "cassandra", Image: "cassandra:4.1", Env: []corev1.EnvVar{
		{Name: "CASSANDRA_PASSWORD", Value: envPassword},
		{Name: "CASSANDRA_CLUSTER_NAME", Value: "demo"},
		{Name: "JMX_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cassandra-jmx"}, Key: "password"}}},
	}}
	for _, name := range w.PodNames() {
		obj, err := w.Kube.Tracker().Get(podsGVR, w.NS, name)
		if err != nil {
			t.Fatal(err)
		}
		p := obj.(*corev1.Pod).DeepCopy()
		p.Spec.Containers = []corev1.Container{c}
		if err := w.Kube.Tracker().Update(podsGVR, p, w.NS); err != nil {
			t.Fatal(err)
		}
	}
	gvr := appsv1.SchemeGroupVersion.WithResource("statefulsets")
	obj, err := w.Kube.Tracker().Get(gvr, w.NS, "demo-dc1-rack1")
	if err != nil {
		t.Fatal(err)
	}
	s := obj.(*appsv1.StatefulSet).DeepCopy()
	s.Spec.Template.Spec.Containers = []corev1.Container{c}
	if err := w.Kube.Tracker().Update(gvr, s, w.NS); err != nil {
		t.Fatal(err)
	}
}

// TestNodetoolCommandPassesExitCode: `kubectl cassandra nodetool POD ARGS` prints what
// nodetool prints, on the same streams, and exits with nodetool's code, adding nothing.
func TestNodetoolCommandPassesExitCode(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2})
	stdout, stderr, code, _ := run(w, 0, "nodetool", "-n", "cassandra", "demo-dc1-rack1-0", "status")
	if code != 0 || !strings.Contains(stdout, "Datacenter: dc1") || stderr != "" {
		t.Fatalf("status: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// airline's usage error: stdout, exit 1 (docs/how-it-works/nodetool.md §1), after "--".
	stdout, stderr, code, _ = run(w, 0, "nodetool", "-n", "cassandra", "demo-dc1-rack1-0", "--", "status", "--bogus")
	if code != 1 || stdout != "nodetool: Found unexpected parameters: [--bogus]\nSee 'nodetool help' or 'nodetool help <command>'.\n" || stderr != "" {
		t.Fatalf("usage error: exit %d\nstdout:\n%q\nstderr:\n%q", code, stdout, stderr)
	}
	// Cassandra down: the connect error on stderr, exit 1.
	if err := w.Cass.SetFault("demo-dc1-rack1-1", sim.Fault{Down: true}); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code, _ = run(w, 0, "nodetool", "-n", "cassandra", "demo-dc1-rack1-1", "info")
	if code != 1 || stdout != "" || stderr != "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused'.\n" {
		t.Fatalf("down: exit %d\nstdout:\n%q\nstderr:\n%q", code, stdout, stderr)
	}
	// A stream failure's exit 2 (E11) passes through too.
	if err := w.Cass.SetFault("demo-dc1-rack1-1", sim.Fault{StreamFailures: 1}); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code, _ = run(w, 0, "nodetool", "-n", "cassandra", "demo-dc1-rack1-1", "decommission", "--force"); code != 2 || !strings.HasPrefix(stderr, "error: Error while decommissioning node: Stream failed\n") {
		t.Fatalf("stream failure: exit %d\nstderr:\n%s", code, stderr)
	}
	for _, argv := range w.StreamArgv() {
		if got := strings.Join(argv[:4], " "); got != "env LANG=C JAVA_TOOL_OPTIONS=-Dcom.sun.jndi.rmiURLParsing=legacy nodetool" {
			t.Errorf("argv %q: not the environment of the plugin's own calls", argv)
		}
	}
}

// TestNodetoolCommandRefusesOtherPods: a pod that is not a Cassandra pod of the cluster
// is refused (exit 2) and nothing runs.
func TestNodetoolCommandRefusesOtherPods(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 1})
	if err := w.Kube.Tracker().Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: w.NS, Labels: map[string]string{"app": "web"}}}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"nodetool", "-n", "cassandra", "web-0", "status"},
		{"nodetool", "-n", "cassandra", "--cluster", "other", "demo-dc1-rack1-0", "status"},
		{"nodetool", "-n", "cassandra", "nope-0", "status"},
	} {
		_, stderr, code, _ := run(w, 0, args...)
		if code != 2 || !strings.Contains(stderr, "nothing run") && !strings.Contains(stderr, "not found") {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, stderr)
		}
	}
	if n := len(w.StreamArgv()); n != 0 {
		t.Fatalf("%d nodetool runs for refused pods", n)
	}
}

// TestJMXAuthRefusedWithoutCredentials: with JMX authentication on, the simulated
// nodetool refuses a call without credentials or with wrong ones, with the JDK's texts
// and exit 1, and the plugin's own reads say it is an authentication refusal (not a
// node that is down) and name --jmx-secret; with the Secret, everything works.
func TestJMXAuthRefusedWithoutCredentials(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2})
	withJMX(t, w)
	_, stderr, code, _ := run(w, 0, "nodetool", "-n", "cassandra", "demo-dc1-rack1-0", "status")
	if want := "nodetool: Failed to connect to '127.0.0.1:7199' - SecurityException: 'Authentication failed! Credentials required'.\n"; code != 1 || stderr != want {
		t.Fatalf("no credentials: exit %d, stderr %q, want 1 and %q", code, stderr, want)
	}
	if err := w.Kube.Tracker().Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "wrong", Namespace: w.NS},
		Data: map[string][]byte{"username": []byte(jmxUser), "password": []byte("not-it")}}); err != nil {
		t.Fatal(err)
	}
	_, stderr, code, _ = run(w, 0, "nodetool", "-n", "cassandra", "--jmx-secret", "wrong", "demo-dc1-rack1-0", "status")
	if want := "nodetool: Failed to connect to '127.0.0.1:7199' - SecurityException: 'Authentication failed! Invalid username or password'.\n"; code != 1 || stderr != want {
		t.Fatalf("wrong password: exit %d, stderr %q, want 1 and %q", code, stderr, want)
	}
	stdout, _, code, _ := run(w, 0, "status", "-n", "cassandra", "demo", "-o", "json")
	if code != 0 || !strings.Contains(stdout, "refused by Cassandra's JMX authentication") || !strings.Contains(stdout, "--jmx-secret") {
		t.Fatalf("status without credentials: exit %d, want a warning naming JMX authentication and --jmx-secret\n%s", code, stdout)
	}
	stdout, stderr, code, _ = run(w, 0, "nodetool", "-n", "cassandra", "--jmx-secret", "cassandra-jmx", "demo-dc1-rack1-0", "status")
	if code != 0 || !strings.Contains(stdout, "UN  10.244.0.11") {
		t.Fatalf("with the secret: exit %d\n%s\n%s", code, stdout, stderr)
	}
	_, stderr, code, _ = run(w, 0, "nodetool", "-n", "cassandra", "--jmx-secret", "missing", "demo-dc1-rack1-0", "status")
	if code != 1 || !strings.Contains(stderr, "cannot read the JMX secret cassandra/missing") {
		t.Fatalf("missing secret: exit %d\n%s", code, stderr)
	}
}

// TestJMXPasswordNeverWritten: a scale-down (interrupted, then resumed), status, the
// nodetool command and a report, all with JMX authentication: the password is in none
// of what the plugin wrote (stdout, stderr, the checkpoint and last-operation
// annotations, Events, the report archive) nor in any command line it ran.
func TestJMXPasswordNeverWritten(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 3, Operator: true})
	withJMX(t, w)
	var written []string
	keep := func(stdout, stderr string) { written = append(written, stdout, stderr) }
	ns := []string{"-n", "cassandra", "--jmx-secret", "cassandra-jmx"}
	stdout, stderr, code, _ := run(w, 0, append([]string{"status", "demo"}, ns...)...)
	keep(stdout, stderr)
	if code != 0 || strings.Contains(stdout, "?") && !strings.Contains(stdout, "UN") {
		t.Fatalf("status: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Crash after the decommission: the checkpoint annotation is left for the grep.
	stdout, stderr, _, crashed := run(w, 2, append([]string{"scale", "demo", "--rack", "rack1", "--nodes", "2", "--yes"}, ns...)...)
	keep(stdout, stderr)
	if !crashed {
		t.Fatalf("the scale did not reach its 2nd side effect:\n%s", stderr)
	}
	cp := w.CR().GetAnnotations()[checkpoint.Annotation]
	if cp == "" {
		t.Fatal("no checkpoint after the crash")
	}
	written = append(written, cp)
	stdout, stderr, code, _ = run(w, 0, append([]string{"resume", "demo", "--yes"}, ns...)...)
	keep(stdout, stderr)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	w.AssertConverged(2, "after resume with JMX auth")
	written = append(written, w.CR().GetAnnotations()[checkpoint.LastOperationAnnotation])
	stdout, stderr, code, _ = run(w, 0, append(append([]string{"nodetool"}, ns...), "demo-dc1-rack1-0", "info")...)
	keep(stdout, stderr)
	if code != 0 {
		t.Fatalf("nodetool info: exit %d\n%s", code, stderr)
	}
	archive := filepath.Join(t.TempDir(), "r.tar.gz")
	stdout, stderr, code, _ = run(w, 0, append([]string{"report", "demo", "-f", archive, "-o", "json"}, ns...)...)
	keep(stdout, stderr)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	files := readArchive(t, archive)
	if !strings.Contains(files["demo-report/nodetool/demo-dc1-rack1-0/status.txt"], "UN") {
		t.Fatalf("the report's nodetool status did not authenticate:\n%s", files["demo-report/nodetool/demo-dc1-rack1-0/status.txt"])
	}
	for name, data := range files {
		written = append(written, name, data)
	}
	evs, err := w.Kube.CoreV1().Events(w.NS).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(evs.Items) == 0 {
		t.Fatalf("no events to check (%v)", err)
	}
	for _, e := range evs.Items {
		written = append(written, e.Reason, e.Message)
	}
	for i, s := range written {
		if strings.Contains(s, jmxPassword) {
			t.Errorf("the JMX password is in what the plugin wrote (item %d):\n%s", i, s)
		}
	}
	authed := 0
	for _, argv := range w.StreamArgv() {
		line := strings.Join(argv, " ")
		if strings.Contains(line, jmxPassword) {
			t.Errorf("the JMX password is on a command line: %s", line)
		}
		if strings.Contains(line, "-u "+jmxUser+" -pwf /dev/stdin") {
			authed++
		}
	}
	if authed < 5 {
		t.Fatalf("only %d nodetool calls passed the credentials", authed)
	}
}

// readArchive returns the files of a tar.gz by name.
func readArchive(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = string(b)
	}
}

// TestReportIndexAndRedaction: the report of a cluster whose pods carry a secret-looking
// env value and whose PVs may not be read: the index lists the expected files with their
// sizes, what could not be read and why, and what was redacted; no file holds the value;
// the summary on stderr is the golden one.
func TestReportIndexAndRedaction(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 2, Operator: true})
	withSecretEnv(t, w)
	withJMX(t, w)
	ctx := context.Background()
	pvcGVR := corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	for _, name := range w.PVCNames() {
		obj, _ := w.Kube.Tracker().Get(pvcGVR, w.NS, name)
		c := obj.(*corev1.PersistentVolumeClaim).DeepCopy()
		c.Spec.VolumeName = "pv-" + name
		if err := w.Kube.Tracker().Update(pvcGVR, c, w.NS); err != nil {
			t.Fatal(err)
		}
	}
	// PersistentVolumes are cluster-scoped: without the optional ClusterRole, forbidden.
	w.Kube.PrependReactor("get", "persistentvolumes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumes"}, a.(k8stesting.GetAction).GetName(), errors.New("no ClusterRole"))
	})
	if _, err := w.Kube.CoreV1().Events(w.NS).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: w.NS},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "demo-dc1-rack1-0"}, Type: "Warning", Reason: "Unhealthy",
		Message: "Readiness probe failed: auth " + envPassword + " rejected", Count: 3}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Cass.SetFault("demo-dc1-rack1-1", sim.Fault{Down: true}); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "report.tar.gz")
	stdout, stderr, code, _ := run(w, 0, "report", "demo", "-n", "cassandra", "--jmx-secret", "cassandra-jmx", "-f", archive, "-o", "json", "--log-lines", "100")
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	var idx struct {
		Cluster, Archive string
		Files            []struct {
			Name string
			Size int
		}
		Unreadable []struct{ What, Error string }
		Redacted   []struct{ Object, Field string }
	}
	if err := json.Unmarshal([]byte(stdout), &idx); err != nil {
		t.Fatalf("-o json is not the index: %v\n%s", err, stdout)
	}
	files := readArchive(t, archive)
	var names []string
	for _, f := range idx.Files {
		names = append(names, f.Name)
		if got := len(files["demo-report/"+f.Name]); got != f.Size {
			t.Errorf("index says %s is %d bytes, the archive has %d", f.Name, f.Size, got)
		}
	}
	want := []string{"ERRORS.txt", "REDACTED.txt", "cluster.yaml", "events/cassandracluster-demo.txt", "events/pod-demo-dc1-rack1-0.txt", "events/pod-demo-dc1-rack1-1.txt",
		"nodetool/demo-dc1-rack1-0/describecluster.txt", "nodetool/demo-dc1-rack1-0/info.txt", "nodetool/demo-dc1-rack1-0/netstats.txt", "nodetool/demo-dc1-rack1-0/status.txt",
		"nodetool/demo-dc1-rack1-1/describecluster.txt", "nodetool/demo-dc1-rack1-1/info.txt", "nodetool/demo-dc1-rack1-1/netstats.txt", "nodetool/demo-dc1-rack1-1/status.txt",
		"operator/cassandra-casskop/deployment.yaml", "operator/cassandra-casskop/logs-casskop-0.txt", "pods.yaml", "pvcs.yaml", "statefulsets.yaml", "version.json"}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Errorf("files:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	if _, ok := files["demo-report/index.json"]; !ok {
		t.Error("no index.json in the archive")
	}
	var unreadable []string
	for _, u := range idx.Unreadable {
		unreadable = append(unreadable, u.What)
	}
	sort.Strings(unreadable)
	wantBad := []string{"PersistentVolume pv-data-demo-dc1-rack1-0 (of data-demo-dc1-rack1-0)", "PersistentVolume pv-data-demo-dc1-rack1-1 (of data-demo-dc1-rack1-1)",
		"nodetool describecluster on demo-dc1-rack1-1", "nodetool info on demo-dc1-rack1-1", "nodetool netstats on demo-dc1-rack1-1", "nodetool status on demo-dc1-rack1-1"}
	if strings.Join(unreadable, "\n") != strings.Join(wantBad, "\n") {
		t.Errorf("unreadable:\n%s\nwant:\n%s", strings.Join(unreadable, "\n"), strings.Join(wantBad, "\n"))
	}
	if !strings.Contains(files["demo-report/ERRORS.txt"], "forbidden") {
		t.Errorf("ERRORS.txt does not say why:\n%s", files["demo-report/ERRORS.txt"])
	}
	var redacted []string
	for _, r := range idx.Redacted {
		redacted = append(redacted, r.Object+" "+r.Field)
	}
	for _, want := range []string{
		"Pod cassandra/demo-dc1-rack1-0 spec.containers[cassandra].env[CASSANDRA_PASSWORD].value",
		"Pod cassandra/demo-dc1-rack1-1 spec.containers[cassandra].env[CASSANDRA_PASSWORD].value",
		"StatefulSet cassandra/demo-dc1-rack1 spec.template.spec.containers[cassandra].env[CASSANDRA_PASSWORD].value",
	} {
		if !contains(redacted, want) {
			t.Errorf("REDACTED does not list %q: %v", want, redacted)
		}
	}
	if !strings.Contains(files["demo-report/REDACTED.txt"], "env[CASSANDRA_PASSWORD]") {
		t.Errorf("REDACTED.txt:\n%s", files["demo-report/REDACTED.txt"])
	}
	for name, data := range files {
		for _, secret := range []string{envPassword, jmxPassword} {
			if strings.Contains(data, secret) {
				t.Errorf("%s holds a secret value %q", name, secret)
			}
		}
	}
	if !strings.Contains(files["demo-report/pods.yaml"], "CASSANDRA_CLUSTER_NAME") || !strings.Contains(files["demo-report/pods.yaml"], "value: demo") {
		t.Error("an innocent env value was redacted too")
	}
	if !strings.Contains(files["demo-report/events/pod-demo-dc1-rack1-0.txt"], "Readiness probe failed: auth REDACTED rejected") {
		t.Errorf("the pod's event is missing or unmasked:\n%s", files["demo-report/events/pod-demo-dc1-rack1-0.txt"])
	}
	checkGolden(t, "summary", strings.ReplaceAll(stderr, archive, "<ARCHIVE>"))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestReportWithoutNodetoolOrEvents: --nodetool=false runs no exec; a forbidden events
// list is listed, the rest is written.
func TestReportWithoutNodetoolOrEvents(t *testing.T) {
	w := world.New(t, world.Opts{Nodes: 1})
	w.Kube.PrependReactor("list", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", errors.New("read-only role"))
	})
	archive := filepath.Join(t.TempDir(), "r.tar.gz")
	_, stderr, code, _ := run(w, 0, "report", "-n", "cassandra", "-f", archive, "--nodetool=false")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if n := len(w.StreamArgv()); n != 0 {
		t.Fatalf("%d execs with --nodetool=false", n)
	}
	files := readArchive(t, archive)
	if !strings.Contains(files["demo-report/ERRORS.txt"], "Events: ") || files["demo-report/cluster.yaml"] == "" {
		t.Fatalf("ERRORS.txt:\n%s", files["demo-report/ERRORS.txt"])
	}
	if !strings.Contains(stderr, "nodetool: skipped (--nodetool=false)") {
		t.Fatalf("summary:\n%s", stderr)
	}
	var b bytes.Buffer
	b.WriteString(stderr)
}

// checkGolden compares got (normalised) with testdata/report/<name>.golden; -update
// rewrites it.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	got = normalise(got)
	path := filepath.Join("testdata", "report", name+".golden") // not goldenDir: TestGolden owns every file there
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test ./internal/cli -run %s -update)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs:\n--- golden\n%s\n--- got\n%s", path, want, got)
	}
}
