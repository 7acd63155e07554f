package prerun

import (
	"context"
	"reflect"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// block is the plugin's replace-node block (issue 25) for pod, writing to file.
func block(pod, ip, file string) string {
	return "#!/bin/sh\n# kubectl-cassandra replace-node op1: begin\nif [ \"$(hostname)\" = '" + pod + "' ]; then\n" +
		"  echo '-Dcassandra.replace_address_first_boot=" + ip + "' >> /etc/cassandra/" + file + "\nfi\n# kubectl-cassandra replace-node op1: end\n"
}

func run(t *testing.T, script, pod, v string) Result {
	t.Helper()
	if !Available() {
		t.Skip(ErrNoBash)
	}
	r, err := Run(context.Background(), script, pod, v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestBlockReachesOnePod: the block gives the named pod the option in the file its
// version reads, and is a no-op exiting 0 on every other pod (§7.3's fix).
func TestBlockReachesOnePod(t *testing.T) {
	want := sim.StartOptions{ReplaceAddress: "10.244.0.12", FirstBoot: true}
	for v, file := range map[string]string{sim.V311: "jvm.options", sim.V41: "jvm-server.options", sim.V50: "jvm-server.options"} {
		r := run(t, block("demo-1", "10.244.0.12", file), "demo-1", v)
		if r.Exit != 0 || !reflect.DeepEqual(r.Options, want) {
			t.Errorf("%s: exit %d, options %+v (%q), want %+v", v, r.Exit, r.Options, r.JVMOptions, want)
		}
		r = run(t, block("demo-1", "10.244.0.12", file), "demo-0", v)
		if r.Exit != 0 || !reflect.DeepEqual(r.Options, sim.StartOptions{}) {
			t.Errorf("%s, another pod: exit %d, options %+v", v, r.Exit, r.Options)
		}
	}
}

// TestWrongFileIsIgnored: on 4.1 a line in jvm.options is not read (§7.3).
func TestWrongFileIsIgnored(t *testing.T) {
	r := run(t, block("demo-1", "10.244.0.12", "jvm.options"), "demo-1", sim.V41)
	if r.Exit != 0 || !reflect.DeepEqual(r.Options, sim.StartOptions{}) || len(r.JVMOptions) != 0 {
		t.Errorf("exit %d, options %+v %q, want none", r.Exit, r.Options, r.JVMOptions)
	}
}

// TestCassKopOneLinerFailsOtherPods: kubectl-casskop's replace script exits 1 on every
// pod but its own (§7.3: `test … == … && echo …`).
func TestCassKopOneLinerFailsOtherPods(t *testing.T) {
	s := `test "$(hostname)" == 'demo-1' && echo -Dcassandra.replace_address_first_boot=10.244.0.12 >> /etc/cassandra/jvm.options`
	if r := run(t, s, "demo-0", sim.V311); r.Exit != 1 {
		t.Errorf("another pod: exit %d, want 1 (%s)", r.Exit, r.Output)
	}
	if r := run(t, s, "demo-1", sim.V311); r.Exit != 0 || r.Options.ReplaceAddress != "10.244.0.12" {
		t.Errorf("its pod: exit %d, options %+v", r.Exit, r.Options)
	}
}

// TestStartOptions: replace_address wins over _first_boot (§4.1).
func TestStartOptions(t *testing.T) {
	o := StartOptions([]string{"-Xss256k", "-Dcassandra.replace_address_first_boot=a", "-Dcassandra.replace_address=b"})
	if o.ReplaceAddress != "b" || o.FirstBoot {
		t.Errorf("%+v", o)
	}
}
