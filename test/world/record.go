package world

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
)

// Changes that make the record and the world part ways (issue 23): the checkpoint
// wiped by another client, the cluster resource deleted, the operator's Deployment
// re-created. None is a side effect of the plugin.

// WipeCheckpoint removes the checkpoint annotation from the cluster resource, as a
// GitOps sync or a `kubectl annotate …-` would.
func (w *World) WipeCheckpoint() {
	w.t.Helper()
	cr := w.CR().DeepCopy()
	ann := cr.GetAnnotations()
	delete(ann, checkpoint.Annotation)
	cr.SetAnnotations(ann)
	w.mu.Lock()
	w.rv++
	cr.SetResourceVersion(fmt.Sprintf("%d", 100+w.rv))
	w.mu.Unlock()
	if err := w.Dyn.Tracker().Update(CCGVR, cr, w.NS); err != nil {
		w.t.Fatal(err)
	}
}

// DeleteCluster deletes the cluster resource at once (no finalizer); its checkpoint
// goes with it.
func (w *World) DeleteCluster() {
	w.t.Helper()
	if err := w.Dyn.Tracker().Delete(CCGVR, w.NS, w.Name); err != nil {
		w.t.Fatal(err)
	}
}

// RecreateDeployment deletes the Deployment and creates it again under the same name
// with a new UID, no annotations and the given replicas (a reinstall, a GitOps replace).
func (w *World) RecreateDeployment(name string, replicas int32) {
	w.t.Helper()
	gvr := appsv1.SchemeGroupVersion.WithResource("deployments")
	obj, err := w.Kube.Tracker().Get(gvr, w.NS, name)
	if err != nil {
		w.t.Fatal(err)
	}
	old := obj.(*appsv1.Deployment)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS, Labels: old.Labels, UID: types.UID(string(old.UID) + "-new"), ResourceVersion: "1"},
		Spec: *old.Spec.DeepCopy()}
	d.Spec.Replicas = &replicas
	if err := w.Kube.Tracker().Delete(gvr, w.NS, name); err != nil {
		w.t.Fatal(err)
	}
	if err := w.Kube.Tracker().Add(d); err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deploymentController(w.NS, name)
}

// PausedBy is the operator Deployment's pause holders (none when absent).
func (w *World) PausedBy(name string) []checkpoint.PauseHolder {
	w.t.Helper()
	obj, err := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), w.NS, name)
	if err != nil {
		w.t.Fatal(err)
	}
	hs, err := checkpoint.PauseHolders(obj.(*appsv1.Deployment).Annotations)
	if err != nil {
		w.t.Fatal(err)
	}
	return hs
}

// AddClusterWithOperation adds another cluster resource, ns/name, whose checkpoint is
// operation id (the recorded scale-down of internal/checkpoint/testdata, renamed): an
// operation of another cluster that stands, as a pause holder's must.
func (w *World) AddClusterWithOperation(ns, name, id string) {
	w.t.Helper()
	raw, err := os.ReadFile(filepath.Join(moduleRoot(w.t), "internal", "checkpoint", "testdata", "v1-scale-down.json"))
	if err != nil {
		w.t.Fatal(err)
	}
	var cp map[string]any
	if err := json.Unmarshal(raw, &cp); err != nil {
		w.t.Fatal(err)
	}
	uid := "cc-uid-" + ns + "-" + name
	cp["operationID"], cp["namespace"], cp["cluster"], cp["clusterUID"] = id, ns, name, uid
	b, _ := json.Marshal(cp)
	cr := w.CR().DeepCopy()
	cr.SetNamespace(ns)
	cr.SetName(name)
	cr.SetUID(types.UID(uid))
	cr.SetResourceVersion("1")
	cr.SetAnnotations(map[string]string{checkpoint.Annotation: string(b)})
	if err := w.Dyn.Tracker().Create(CCGVR, cr, ns); err != nil {
		w.t.Fatal(err)
	}
}

// moduleRoot is the directory of go.mod above the test's working directory.
func moduleRoot(t interface{ Fatal(...any) }) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
