package report

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// TestRedactor: env values and fields whose names look secret are masked and listed;
// names of secrets, secretKeyRef keys and innocent values stay; kubectl's
// last-applied-configuration is dropped; free text is masked with the values found.
func TestRedactor(t *testing.T) {
	var obj any
	_ = json.Unmarshal([]byte(`{
	  "metadata": {"name": "p", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...hunter2...}"}, "managedFields": [{}]},
	  "spec": {
	    "imageJolokiaSecret": {"name": "jmx"},
	    "containers": [{"name": "cassandra", "env": [
	      {"name": "CASSANDRA_PASSWORD", "value": "hunter2"},
	      {"name": "AWS_SECRET_ACCESS_KEY", "value": "AKIAXXXX"},
	      {"name": "API_TOKEN", "value": "tok-123"},
	      {"name": "MAX_HEAP_SIZE", "value": "1G"},
	      {"name": "JMX_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "jmx", "key": "password"}}}
	    ]}],
	    "tolerations": [{"key": "node-role", "value": "db"}],
	    "backup": {"secretName": "s3", "accessToken": "abcd-efgh"}
	  }}`), &obj)
	r := &redactor{}
	r.object("Pod ns/p", obj)
	var got []string
	for _, d := range r.done {
		got = append(got, d.Field)
	}
	sort.Strings(got) // the report sorts them; the walk keeps list order
	want := []string{
		"metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]",
		"spec.backup.accessToken",
		"spec.containers[cassandra].env[API_TOKEN].value",
		"spec.containers[cassandra].env[AWS_SECRET_ACCESS_KEY].value",
		"spec.containers[cassandra].env[CASSANDRA_PASSWORD].value",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("redacted:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b, _ := json.Marshal(obj)
	s := string(b)
	for _, secret := range []string{"hunter2", "AKIAXXXX", "tok-123", "abcd-efgh", "managedFields"} {
		if strings.Contains(s, secret) {
			t.Errorf("%q left in %s", secret, s)
		}
	}
	for _, kept := range []string{`"value":"1G"`, `"key":"password"`, `"secretName":"s3"`, `"key":"node-role"`, `"imageJolokiaSecret":{"name":"jmx"}`} {
		if !strings.Contains(s, kept) {
			t.Errorf("%s was masked: %s", kept, s)
		}
	}
	if got := r.text("log: login with hunter2 and tok-123"); got != "log: login with REDACTED and REDACTED" {
		t.Errorf("text: %q", got)
	}
}
