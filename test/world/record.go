package world

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Changes that make the record and the world part ways (issue 23): the checkpoint
// wiped by another client, the cluster resource deleted, the operator's Deployment
// re-created. None is a side effect of the plugin.

// WipeCheckpoint removes the checkpoint annotation from the cluster resource, as a
// GitOps sync or a `kubectl annotate …-` would.
func (w *World) WipeCheckpoint() {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.wipeCheckpoint(); err != nil {
		w.t.Fatal(err)
	}
}

// wipeCheckpoint is WipeCheckpoint with w.mu held.
func (w *World) wipeCheckpoint() error {
	obj, err := w.Dyn.Tracker().Get(w.crGVR(), w.NS, w.crName())
	if err != nil {
		return err
	}
	cr := obj.(*unstructured.Unstructured).DeepCopy()
	ann := cr.GetAnnotations()
	if _, ok := ann[checkpoint.Annotation]; !ok {
		return errNoChange
	}
	delete(ann, checkpoint.Annotation)
	cr.SetAnnotations(ann)
	w.rv++
	cr.SetResourceVersion(fmt.Sprintf("%d", 100+w.rv))
	return w.Dyn.Tracker().Update(w.crGVR(), cr, w.NS)
}

var errNoChange = errors.New("nothing to change")

// DeleteCluster deletes the cluster resource at once (no finalizer); its checkpoint
// goes with it.
func (w *World) DeleteCluster() {
	w.t.Helper()
	if err := w.Dyn.Tracker().Delete(w.crGVR(), w.NS, w.crName()); err != nil {
		w.t.Fatal(err)
	}
}

// RecreateDeployment deletes the Deployment and creates it again under the same name
// with a new UID, no annotations and the given replicas (a reinstall, a GitOps replace).
func (w *World) RecreateDeployment(name string, replicas int32) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.recreateDeployment(name, replicas); err != nil {
		w.t.Fatal(err)
	}
}

// recreateDeployment is RecreateDeployment with w.mu held.
func (w *World) recreateDeployment(name string, replicas int32) error {
	obj, err := w.Kube.Tracker().Get(deployGVR, w.NS, name)
	if err != nil {
		return err
	}
	old := obj.(*appsv1.Deployment)
	w.rv++
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS, Labels: old.Labels, UID: types.UID(string(old.UID) + "-new"), ResourceVersion: fmt.Sprintf("%d", 100+w.rv)},
		Spec: *old.Spec.DeepCopy()}
	d.Spec.Replicas = &replicas
	if err := w.Kube.Tracker().Delete(deployGVR, w.NS, name); err != nil {
		return err
	}
	if err := w.Kube.Tracker().Add(d); err != nil {
		return err
	}
	w.deploymentController(w.NS, name)
	return nil
}

// RecordWiped is the change "the checkpoint is removed by another client".
func RecordWiped() Change {
	return Change{Name: "record-wiped", apply: func(w *World) ([]string, func(), bool) {
		return []string{"removed"}, nil, w.wipeCheckpoint() == nil
	}}
}

// ClusterDeleted is the change "the cluster resource is deleted (no finalizer)".
func ClusterDeleted() Change {
	return Change{Name: "cluster-deleted", apply: func(w *World) ([]string, func(), bool) {
		return []string{"deleted", "not found"}, nil, w.Dyn.Tracker().Delete(w.crGVR(), w.NS, w.crName()) == nil
	}}
}

// OperatorRecreated is the change "the operator's Deployment is re-created, at 0
// replicas" (a reinstall while the plan holds it paused, scaled to 0 by hand after).
func OperatorRecreated(name string) Change {
	return Change{Name: "operator-recreated", apply: func(w *World) ([]string, func(), bool) {
		// Only while an operation holds it paused: re-created at 0 after the restore is
		// an operator someone else stopped, which no operation of ours is to restore.
		if obj, err := w.Kube.Tracker().Get(deployGVR, w.NS, name); err != nil || obj.(*appsv1.Deployment).Annotations[record.PausedByAnnotation] == "" {
			return nil, nil, false
		}
		return []string{"re-created"}, nil, w.recreateDeployment(name, 0) == nil
	}}
}

// DeadEnd lists what keeps the world from a consistent end after recovery: the
// operator not running or still held paused, a checkpoint left, a rack whose
// StatefulSet differs from the cluster resource (cass-operator: the size from the
// racks or from the pods that exist, dcDisagrees), a pod or PVC above a rack's
// replicas, and every safety violation seen. A deleted cluster needs only its operator
// back.
func (w *World) DeadEnd(operator string) []string {
	var out []string
	if r := w.DeploymentReplicas(operator); r == 0 {
		out = append(out, "the operator is at 0 replicas")
	}
	if hs := w.PausedBy(operator); len(hs) > 0 {
		out = append(out, fmt.Sprintf("the operator is still held paused by %v", hs))
	}
	out = append(out, w.Violations()...)
	obj, err := w.Dyn.Tracker().Get(w.crGVR(), w.NS, w.crName())
	if err != nil {
		return out
	}
	if _, ok := obj.(*unstructured.Unstructured).GetAnnotations()[checkpoint.Annotation]; ok {
		out = append(out, "a checkpoint is left")
	}
	w.mu.Lock()
	if d := w.clusterDisagrees(); d != "" {
		out = append(out, d)
	}
	w.mu.Unlock()
	pods, pvcs := " "+strings.Join(w.PodNames(), " ")+" ", " "+strings.Join(w.PVCNames(), " ")+" "
	for _, r := range w.Racks {
		sts := w.stsName(r)
		for i := w.Replicas(r); i < w.Nodes+4; i++ {
			pod := fmt.Sprintf("%s-%d", sts, i)
			if strings.Contains(pods, " "+pod+" ") {
				out = append(out, "pod "+pod+" left above the StatefulSet's replicas")
			}
			if c := w.dataClaim(pod); strings.Contains(pvcs, " "+c+" ") {
				out = append(out, "PVC "+c+" left above the StatefulSet's replicas")
			}
		}
	}
	return out
}

// PausedBy is the operator Deployment's pause holders (none when absent).
func (w *World) PausedBy(name string) []record.PauseHolder {
	w.t.Helper()
	obj, err := w.Kube.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), w.NS, name)
	if err != nil {
		w.t.Fatal(err)
	}
	hs, err := record.PauseHolders(obj.(*appsv1.Deployment).Annotations)
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
