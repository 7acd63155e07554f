package cassoperator

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// TestMapSample: the sample datacenter is one cluster named as the resource, holding
// datacenter dc1 with its three racks in spec order, one node each.
func TestMapSample(t *testing.T) {
	a, _, _ := fakeAdapter([]runtime.Object{sample(t, "db")})
	cl, u, err := a.Get(context.Background(), "db", "dc1")
	if err != nil {
		t.Fatal(err)
	}
	if cl.Name != "dc1" || cl.Namespace != "db" || cl.Operator != "cass-operator" || cl.ServerVersion != "4.1.2" || cl.UID != "uid-1" || u == nil {
		t.Errorf("cluster %+v", cl)
	}
	if len(cl.DCs) != 1 || cl.DCs[0].Name != "dc1" || cl.DCs[0].Spec != "size 3" {
		t.Fatalf("dcs %+v", cl.DCs)
	}
	var names []string
	for i, r := range cl.DCs[0].Racks {
		names = append(names, r.Name)
		want := "development-dc1-rack" + string(rune('1'+i)) + "-sts"
		if r.StatefulSet != want || r.Nodes != 1 || r.DC != "dc1" {
			t.Errorf("rack %+v, want StatefulSet %s, 1 node", r, want)
		}
		wantLabels := map[string]string{LabelCluster: "development", LabelDatacenter: "dc1", LabelRack: r.Name}
		if !reflect.DeepEqual(r.Labels, wantLabels) {
			t.Errorf("rack %s labels %v", r.Name, r.Labels)
		}
	}
	if strings.Join(names, ",") != "rack1,rack2,rack3" {
		t.Errorf("racks %v", names)
	}
	if len(cl.Busy) != 0 || cl.Deleting {
		t.Errorf("busy %v deleting %v", cl.Busy, cl.Deleting)
	}
	if got := a.JMXSecretName(u); got != "development-superuser" {
		t.Errorf("JMX secret %q", got)
	}
}

// TestMapNames: the datacenterName override names the DC in Cassandra, but labels and
// object names keep the resource's name (or status.datacenterName); clusterName is
// cleaned; no racks is one rack "default"; the size is split with the first racks larger.
func TestMapNames(t *testing.T) {
	a := &Adapter{API: operator.APIVersion{Version: Version}}
	u := dc("db", "dc-east", map[string]any{"clusterName": "My_Cluster", "datacenterName": "East DC", "size": int64(5),
		"racks": racks("r1", "r2", "r3"), "superuserSecretName": "su"})
	cl, err := a.FromObject(u)
	if err != nil {
		t.Fatal(err)
	}
	d := cl.DCs[0]
	if d.Name != "East DC" || cl.Name != "dc-east" {
		t.Errorf("dc %q cluster %q", d.Name, cl.Name)
	}
	if got := d.RackNodes(); got["r1"] != 2 || got["r2"] != 2 || got["r3"] != 1 {
		t.Errorf("rack nodes %v", got)
	}
	r := d.Racks[0]
	if r.StatefulSet != "my-cluster-dc-east-r1-sts" || r.Labels[LabelCluster] != "My_Cluster" || r.Labels[LabelDatacenter] != "dc-east" {
		t.Errorf("rack %+v", r)
	}
	if a.JMXSecretName(u) != "su" {
		t.Errorf("superuserSecretName not used")
	}

	// An old datacenter whose status recorded the override keeps it in object names.
	withStatus(u, map[string]any{"datacenterName": "east"})
	cl, _ = a.FromObject(u)
	if got := cl.DCs[0].Racks[0].StatefulSet; got != "my-cluster-east-r1-sts" {
		t.Errorf("StatefulSet with status.datacenterName: %s", got)
	}

	cl, _ = a.FromObject(dc("db", "dc1", map[string]any{"clusterName": "c", "size": int64(3), "stopped": true}))
	if d := cl.DCs[0]; len(d.Racks) != 1 || d.Racks[0].Name != "default" || d.Racks[0].Nodes != 3 || d.Racks[0].StatefulSet != "c-dc1-default-sts" || d.Spec != "size 3, stopped" {
		t.Errorf("no racks: %+v", d)
	}
}

// TestBusy: why cass-operator is not idle, from the spec and status alone.
func TestBusy(t *testing.T) {
	cond := func(typ, status, reason, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg}
	}
	for _, tc := range []struct {
		name    string
		stopped bool
		status  map[string]any
		want    []string
	}{
		{"never reconciled", false, nil, nil},
		{"ready", false, map[string]any{"cassandraOperatorProgress": "Ready", "observedGeneration": int64(2),
			"conditions": []any{cond("Ready", "True", "", ""), cond("ScalingDown", "False", "", ""), cond("Valid", "True", "", "")}}, nil},
		{"scaling down", false, map[string]any{"cassandraOperatorProgress": "Updating",
			"conditions": []any{cond("ScalingDown", "True", "", "")}},
			[]string{"status.cassandraOperatorProgress is Updating (want Ready)", "condition ScalingDown is True"}},
		{"rolling restart and replacing", false, map[string]any{"cassandraOperatorProgress": "Ready",
			"conditions": []any{cond("RollingRestart", "True", "", ""), cond("ReplacingNodes", "True", "", "")}},
			[]string{"condition RollingRestart is True", "condition ReplacingNodes is True"}},
		{"not valid", false, map[string]any{"cassandraOperatorProgress": "Ready",
			"conditions": []any{cond("Valid", "False", "notEnoughSpaceToScaleDown", "not enough space")}},
			[]string{"condition Valid is False: notEnoughSpaceToScaleDown: not enough space"}},
		{"stopped", true, map[string]any{"cassandraOperatorProgress": "Ready"}, []string{"spec.stopped is true (the datacenter is shut down)"}},
		{"spec not reconciled", false, map[string]any{"cassandraOperatorProgress": "Ready", "observedGeneration": int64(1)},
			[]string{"status.observedGeneration 1 is behind metadata.generation 2 (a spec change not reconciled yet)"}},
	} {
		u := dc("db", "dc1", map[string]any{"clusterName": "c", "size": int64(3), "stopped": tc.stopped})
		u.SetGeneration(2)
		if tc.status != nil {
			withStatus(u, tc.status)
		}
		if got := Busy(u); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: busy %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestNoCRD: an assumed version answered NotFound asks discovery, which serves no
// CassandraDatacenter: ErrNoCRD, matched as operator.ErrNoResource.
func TestNoCRD(t *testing.T) {
	a, _, _ := fakeAdapter(nil)
	_, _, err := a.Get(context.Background(), "db", "dc1")
	if !errors.Is(err, operator.ErrNoResource) {
		t.Errorf("get without CRD: %v", err)
	}
}

// TestMapEncryption: internode encryption comes from spec.config's cassandra-yaml; a
// spec.configSecret, which overrides it, cannot be read.
func TestMapEncryption(t *testing.T) {
	u := sample(t, "db")
	u.Object["spec"].(map[string]any)["config"] = map[string]any{"cassandra-yaml": map[string]any{"server_encryption_options": map[string]any{"internode_encryption": "rack"}}}
	cl, err := (&Adapter{}).FromObject(u)
	if err != nil {
		t.Fatal(err)
	}
	if e := cl.DCs[0].Encryption; e.Internode != "rack" || e.Unknown != "" {
		t.Errorf("config: %+v", e)
	}
	u.Object["spec"].(map[string]any)["configSecret"] = "cfg"
	if cl, err = (&Adapter{}).FromObject(u); err != nil {
		t.Fatal(err)
	}
	if e := cl.DCs[0].Encryption; !strings.Contains(e.Unknown, "spec.configSecret cfg") {
		t.Errorf("configSecret: %+v", e)
	}
}
