package cql

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
)

// A SELECT JSON's answer as cqlsh prints it (cqlsh.py print_formatted_result: the
// column header, a dashes line, the rows, "(N rows)").
const selectOut = `
 [json]
---------------------------------------------------------------------------------------------------------------------------------
                                  {"keyspace_name": "system", "replication": {"class": "org.apache.cassandra.locator.LocalStrategy"}}
 {"keyspace_name": "system_auth", "replication": {"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "3", "dc2": "3"}}
             {"keyspace_name": "app", "replication": {"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "3"}}
       {"keyspace_name": "legacy", "replication": {"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "2"}}

(4 rows)
`

func TestParseReplication(t *testing.T) {
	ks, err := ParseReplication(selectOut)
	if err != nil {
		t.Fatal(err)
	}
	want := []Keyspace{
		{Name: "app", Class: NTS, DCs: map[string]int{"dc1": 3}},
		{Name: "legacy", Class: "org.apache.cassandra.locator.SimpleStrategy", Options: map[string]string{"replication_factor": "2"}},
		{Name: "system", Class: "org.apache.cassandra.locator.LocalStrategy"},
		{Name: "system_auth", Class: NTS, DCs: map[string]int{"dc1": 3, "dc2": 3}},
	}
	if !reflect.DeepEqual(ks, want) {
		t.Fatalf("got %+v\nwant %+v", ks, want)
	}
	if !ks[2].Local() || ks[0].Local() || !ks[3].NTS() || ks[1].NTS() {
		t.Fatal("strategy tests")
	}
	if _, err := ParseReplication(strings.Replace(selectOut, "(4 rows)", "(5 rows)", 1)); err == nil {
		t.Fatal("a truncated answer must be an error")
	}
	if _, err := ParseReplication("Connection error"); err == nil {
		t.Fatal("no rows must be an error")
	}
}

func TestAlter(t *testing.T) {
	k := Keyspace{Name: "App", Class: NTS, DCs: map[string]int{"dc2": 3, "dc1": 3}}
	got := Alter(k.Name, k.Without("dc2"))
	if want := `ALTER KEYSPACE "App" WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3'}`; got != want {
		t.Fatalf("got %s", got)
	}
	if got := Alter("system_auth", map[string]int{"dc1": 3, "dc2": 2}); got != "ALTER KEYSPACE system_auth WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3', 'dc2': '2'}" {
		t.Fatalf("got %s", got)
	}
}

type recorder struct {
	argv  []string
	stdin string
}

func (r *recorder) Stream(_ context.Context, _ string, argv []string, stdin io.Reader, stdout, _ io.Writer) error {
	r.argv = argv
	if stdin != nil {
		b, _ := io.ReadAll(stdin)
		r.stdin = string(b)
	}
	_, _ = io.Copy(stdout, bytes.NewBufferString(selectOut))
	return nil
}

// The password goes to stdin as the cqlshrc, never into argv.
func TestCredentialsOnStdinOnly(t *testing.T) {
	r := &recorder{}
	c := Client{Exec: r, Auth: func(context.Context) (*Credentials, error) {
		return &Credentials{Username: "admin", Password: "s3cr3t"}, nil
	}}
	if _, err := c.Replication(context.Background(), "p-0", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(r.argv, " "), "s3cr3t") {
		t.Fatalf("password on argv: %v", r.argv)
	}
	if want := []string{"cqlsh", "--cqlshrc", RCFile, "10.0.0.1", "-e", SelectReplication}; !reflect.DeepEqual(r.argv, want) {
		t.Fatalf("argv %v", r.argv)
	}
	if r.stdin != "[authentication]\nusername = admin\npassword = s3cr3t\n" {
		t.Fatalf("stdin %q", r.stdin)
	}
}
