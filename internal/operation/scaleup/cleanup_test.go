package scaleup

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
)

// ringInfo answers every nodetool read with one ring (operation.NodeInfo).
type ringInfo struct{ r nodetool.Ring }

func (ringInfo) Info(context.Context, string) (nodetool.Info, error) { return nodetool.Info{}, nil }
func (ringInfo) Netstats(context.Context, string) (nodetool.Netstats, error) {
	return nodetool.Netstats{Mode: nodetool.ModeNormal}, nil
}
func (i ringInfo) Status(context.Context, string) (nodetool.Ring, error) { return i.r, nil }
func (ringInfo) DescribeCluster(context.Context, string) (nodetool.ClusterDescription, error) {
	return nodetool.ClusterDescription{}, nil
}

// TestDrivenCleanupPlan: a cass-operator scale-up 2 -> 4 with --cleanup asks for each
// node, then creates the operation's cleanup task and waits for each pre-existing pod
// (racks by name, then pods by name) and the task's end.
func TestDrivenCleanupPlan(t *testing.T) {
	ctx := context.Background()
	ns := "ns"
	dc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cassandra.datastax.com/v1beta1", "kind": "CassandraDatacenter",
		"metadata": map[string]any{"name": "dc1", "namespace": ns, "uid": "dc-uid", "resourceVersion": "1"},
		"spec": map[string]any{"clusterName": "demo", "size": int64(2), "serverVersion": "4.1.2",
			"racks": []any{map[string]any{"name": "r1"}, map[string]any{"name": "r2"}}},
		"status": map[string]any{"cassandraOperatorProgress": "Ready"},
	}}
	gvr := schema.GroupVersionResource{Group: "cassandra.datastax.com", Version: "v1beta1", Resource: "cassandradatacenters"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: "CassandraDatacenterList", cassoperator.TaskGVR: "CassandraTaskList"}, dc)
	kube := kubefake.NewSimpleClientset()
	var ring nodetool.Ring
	for i, r := range []string{"r1", "r2"} {
		sts := cassoperator.StatefulSetName("demo", "dc1", r)
		one := int32(1)
		lbl := cassoperator.RackLabels("demo", "dc1", r)
		if _, err := kube.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: sts, Namespace: ns, Labels: lbl},
			Spec: appsv1.StatefulSetSpec{Replicas: &one, VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "server-data"}}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ip := fmt.Sprintf("10.0.0.%d", i+1)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: sts + "-0", Namespace: ns, Labels: lbl, UID: k8stypes.UID("uid-" + r)},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
		if _, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ring.Nodes = append(ring.Nodes, nodetool.Node{DC: "dc1", Rack: r, Status: "U", State: "N", Address: ip, HostID: "host-" + r})
	}
	a := &cassoperator.Adapter{Dynamic: dyn, Kube: kube, Discovery: kube.Discovery()}
	a.Assume()
	cl, _, err := a.Get(ctx, ns, "dc1")
	if err != nil {
		t.Fatal(err)
	}
	env := &operation.Env{Planner: &operation.Planner{Kube: kube, Nodetool: ringInfo{ring}}, Cluster: cl, Adapter: a,
		Request: operation.Request{Nodes: 4, Cleanup: true}}
	p, err := (Kind{}).Plan(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range p.CP.Steps {
		ids = append(ids, s.ID)
	}
	want := []string{"request-growth/demo-dc1-r1-sts-1", "wait-joined/demo-dc1-r1-sts-1", "request-growth/demo-dc1-r2-sts-1", "wait-joined/demo-dc1-r2-sts-1",
		"create-task", "wait-cleaned/demo-dc1-r1-sts-0", "wait-cleaned/demo-dc1-r2-sts-0", "wait-task-done"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("steps %q\nwant %q", ids, want)
	}
	if task := steps.TaskOf(p.CP); task.Name != p.CP.OperationID+"-cleanup" || task.Command != "cleanup" || task.Rack != "" || task.DC != "dc1" {
		t.Fatalf("task %+v", task)
	}
	if !strings.Contains(strings.Join(p.Warnings, "\n"), "also creates a cleanup task of its own") {
		t.Fatalf("warnings %q", p.Warnings)
	}
	if err := checkpoint.Validate(p.CP, "", checkpoint.Schemas{Name: (Kind{}).Info().Checkpoint}); err != nil {
		t.Fatalf("the checkpoint does not validate: %v", err)
	}
	// Without --cleanup: no task steps, and the plan says the operator cleans up itself.
	env.Request.Cleanup = false
	p, err = (Kind{}).Plan(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.CP.Steps) != 4 || !strings.Contains(strings.Join(p.Warnings, "\n"), "the plugin does not track it") {
		t.Fatalf("steps %v, warnings %q", p.CP.Steps, p.Warnings)
	}
}
