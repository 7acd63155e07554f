package status

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// idle is what status reads of a healthy idle cluster: one rack of three Ready pods
// (listed unsorted, as a watch's map gives them), their data claims of 10Gi and a ring
// of 1 GiB each.
func idle() Read {
	replicas := int32(3)
	sts := appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "demo-dc1-r1"}}
	sts.Spec.Replicas = &replicas
	sts.Status.ReadyReplicas = 3
	sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	r := Read{
		Cluster: topology.Cluster{Name: "demo", Namespace: "ns", Operator: "casskop", DCs: []topology.DC{{Name: "dc1", Spec: "nodesPerRacks 3",
			Racks: []topology.Rack{{DC: "dc1", Name: "r1", StatefulSet: "demo-dc1-r1", Nodes: 3}}}}},
		Kind: "CassandraCluster", OperatorTitle: "CassKop", Nodetool: true,
		StatefulSets: []appsv1.StatefulSet{sts},
		Ring:         &pubnodetool.Ring{},
		Commands:     Commands{Resume: "resume", Wait: "status --wait", Start: "scale", Inspect: "get"},
	}
	for _, i := range []string{"2", "0", "1"} {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "demo-dc1-r1-" + i}}
		p.Status.PodIP = "10.0.0." + i
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		r.Pods = append(r.Pods, p)
		c := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-demo-dc1-r1-" + i}}
		c.Status.Phase = corev1.ClaimBound
		c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}
		r.PVCs = append(r.PVCs, c)
		r.Ring.Nodes = append(r.Ring.Nodes, pubnodetool.Node{Status: "U", State: "N", Address: p.Status.PodIP, Load: "1 GiB", Owns: "33.3%", HostID: "h" + i})
	}
	return r
}

func TestBuild(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	inFlight := &record.Checkpoint{OperationID: "op1", Kind: checkpoint.KindScaleDown, StartedAt: at, UpdatedAt: at,
		PausedOperator: &record.PausedOperator{Namespace: "ops", Name: "casskop", Replicas: 1},
		Steps: []record.Step{
			{ID: "pause", Kind: record.StepPauseOperator, State: record.StateDone},
			{ID: "old", State: record.StateDone, Progress: &record.Progress{Pod: "done", At: at.Add(time.Hour)}},
			{ID: "dec", State: record.StateStarted, Attempts: 2, Progress: &record.Progress{Pod: "a", At: at}},
			{ID: "next", State: record.StatePending, Progress: &record.Progress{Pod: "b", At: at.Add(time.Minute)}},
			{ID: "resume", Kind: record.StepResumeOperator, State: record.StatePending},
		}}
	tests := []struct {
		name  string
		edit  func(r *Read)
		check func(t *testing.T, rep Report)
	}{
		{"idle: pods by ordinal with their nodes, claims, space check, start next", func(*Read) {}, func(t *testing.T, rep Report) {
			rk := rep.Datacenters[0].Racks[0]
			if rk.Pods[0].Name != "demo-dc1-r1-0" || rk.Pods[2].NodeState != "UN" || rk.Pods[1].HostID != "h1" || rk.Pods[1].Load != "1 GiB" {
				t.Errorf("pods %+v", rk.Pods)
			}
			if len(rk.PVCs) != 3 || rk.PVCs[0].Capacity != "10Gi" || !rk.PVCs[0].PodExists || rk.PVCs[0].Pod != "demo-dc1-r1-0" {
				t.Errorf("claims %+v", rk.PVCs)
			}
			if ro := rk.RemoveOne; ro == nil || ro.Pod != "demo-dc1-r1-2" || !ro.Known || !ro.Fits {
				t.Errorf("removeOne %+v", rk.RemoveOne)
			}
			if !rk.Exists || rk.Replicas != 3 || rk.ReadyReplicas != 3 || rk.Nodes != 3 || rep.Datacenters[0].NodesPerRack != 3 {
				t.Errorf("rack %+v", rk)
			}
			if rep.Operation != nil || rep.Next != "scale" || rep.Warnings == nil || len(rep.Warnings) != 0 || rep.OperatorBusy == nil {
				t.Errorf("operation %+v, next %q, warnings %#v, busy %#v", rep.Operation, rep.Next, rep.Warnings, rep.OperatorBusy)
			}
		}},
		{"no nodetool: every node unknown, and said first", func(r *Read) {
			r.Nodetool, r.Ring = false, nil
			r.StatefulSets = nil
		}, func(t *testing.T, rep Report) {
			want := []string{"node states not read (--nodetool=false)", "StatefulSet demo-dc1-r1 of rack dc1/r1 does not exist"}
			if !reflect.DeepEqual(rep.Warnings, want) {
				t.Errorf("warnings %q, want %q", rep.Warnings, want)
			}
			rk := rep.Datacenters[0].Racks[0]
			if rk.Exists || rk.Pods[0].NodeState != "?" || len(rk.PVCs) != 0 || rk.RemoveOne != nil {
				t.Errorf("rack %+v", rk)
			}
		}},
		{"failed reads: warned in the order they are made", func(r *Read) {
			r.LastErr = errors.New("bad")
			r.PVCsErr, r.OperatorsErr = errors.New("forbidden"), errors.New("down")
			r.Ring = nil
			r.RingErrs = []PodError{{Pod: "demo-dc1-r1-0", Err: errors.New("timeout")}}
		}, func(t *testing.T, rep Report) {
			want := []string{"annotation " + checkpoint.LastOperationAnnotation + " is not valid JSON: bad", "cannot list PVCs: forbidden",
				"cannot check for a running CassKop operator: down", "cannot read the ring from demo-dc1-r1-0: timeout"}
			if !reflect.DeepEqual(rep.Warnings, want) {
				t.Errorf("warnings %q, want %q", rep.Warnings, want)
			}
			if ro := rep.Datacenters[0].Racks[0].RemoveOne; ro == nil || ro.Known {
				t.Errorf("removeOne without a ring %+v, want unknown", ro)
			}
		}},
		{"unusable checkpoint: inspect the resource next", func(r *Read) {
			r.CheckpointErr = errors.New("corrupt")
		}, func(t *testing.T, rep Report) {
			if rep.Operation == nil || rep.Operation.Error != "corrupt" || rep.Next != "get" {
				t.Errorf("operation %+v, next %q", rep.Operation, rep.Next)
			}
		}},
		{"in flight, holder stopped: steps done, current step, newest progress not done, operator paused, resume next", func(r *Read) {
			r.Checkpoint = inFlight
			r.Holder = checkpoint.Liveness{Stopped: true, Why: "process 7 on tools is gone"}
		}, func(t *testing.T, rep Report) {
			op := rep.Operation
			if op.StepsDone != 2 || op.StepsTotal != 5 || op.CurrentStep.ID != "dec" || op.Progress.Pod != "b" || op.PausedOperator == nil {
				t.Errorf("operation %+v", op)
			}
			if op.StartedAt != "2026-01-02T03:04:05Z" || rep.Next != "resume --yes" || op.Running || op.Judged != "process 7 on tools is gone" {
				t.Errorf("startedAt %q, next %q, running %v (%s)", op.StartedAt, rep.Next, op.Running, op.Judged)
			}
		}},
		{"in flight, held by a live run: follow it next (resume would be refused)", func(r *Read) {
			r.Checkpoint = inFlight
			r.Holder = checkpoint.Liveness{Why: "a live process on this machine"}
		}, func(t *testing.T, rep Report) {
			if op := rep.Operation; !op.Running || op.Judged != "a live process on this machine" || rep.Next != "status --wait" {
				t.Errorf("running %v (%s), next %q", op.Running, op.Judged, rep.Next)
			}
		}},
		{"running operator and busy resource", func(r *Read) {
			r.Cluster.Busy = []string{"rack r1 busy"}
			r.Operators = []operator.Controller{{Namespace: "ops", Name: "casskop", Replicas: 1}}
		}, func(t *testing.T, rep Report) {
			want := []string{"rack r1 busy", "CassKop operator ops/casskop is running (replicas 1)"}
			if !reflect.DeepEqual(rep.OperatorBusy, want) {
				t.Errorf("busy %q, want %q", rep.OperatorBusy, want)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := idle()
			tt.edit(&r)
			tt.check(t, Build(r))
		})
	}
}

// TestBuildKeepsOperatorPausedOnlyBetweenPauseAndResume: the report names the paused
// operator only while the operation holds it paused.
func TestBuildKeepsOperatorPausedOnlyBetweenPauseAndResume(t *testing.T) {
	for _, tt := range []struct {
		pause, resume string
		want          bool
	}{
		{record.StatePending, record.StatePending, false},
		{record.StateDone, record.StatePending, true},
		{record.StateDone, record.StateDone, false},
	} {
		r := idle()
		r.Checkpoint = &record.Checkpoint{PausedOperator: &record.PausedOperator{Name: "casskop"}, Steps: []record.Step{
			{Kind: record.StepPauseOperator, State: tt.pause}, {Kind: record.StepResumeOperator, State: tt.resume}}}
		if got := Build(r).Operation.PausedOperator != nil; got != tt.want {
			t.Errorf("pause %s, resume %s: paused %v, want %v", tt.pause, tt.resume, got, tt.want)
		}
	}
}

// TestBuildDoesNotReorderWhatWasRead: Build is pure; the pods read stay as read.
func TestBuildDoesNotReorderWhatWasRead(t *testing.T) {
	r := idle()
	Build(r)
	var names []string
	for _, p := range r.Pods {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, ","); got != "demo-dc1-r1-2,demo-dc1-r1-0,demo-dc1-r1-1" {
		t.Errorf("pods after Build: %s", got)
	}
}
