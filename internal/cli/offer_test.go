package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation/restart"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"github.com/kubectl-cassandra/kubectl-cassandra/test/world"
)

// bounce is a new operation kind written as a kind is meant to be written: one type,
// here in a test instead of a package of its own, reusing the restart's plan and steps
// under its own name, command and checkpoint schema.
type bounce struct{ restart.Kind }

func (bounce) Info() pub.Info {
	info := restart.Kind{}.Info()
	info.Name, info.ConfirmWord = "bounce", "Bounce"
	return info
}

// Plan is the restart's plan, recorded under the new kind's name.
func (b bounce) Plan(ctx context.Context, env *pub.Env) (*pub.Plan, error) {
	plan, err := b.Kind.Plan(ctx, env)
	if err == nil {
		plan.CP.Kind = b.Info().Name
	}
	return plan, err
}

func (bounce) Command() pub.Command {
	return pub.Command{
		Use: "bounce [CLUSTER] --rack RACK", Short: "Bounce a rack's pods", Long: "Bounce the pods of a {Kind}'s rack.",
		DryRun: "Print the plan", During: "the bounce", Busy: true,
		Flags:    func(fs *pflag.FlagSet, req *pub.Request) { operation.RackFlags(fs, req, "Rack to bounce") },
		Validate: func(req pub.Request, _ func(string) bool) error { return operation.RequireRack(req) },
		Next: func(ns, cluster string, plan *pub.Plan, req pub.Request) string {
			return operation.RackNext("bounce", ns, cluster, plan, req) + " --yes"
		},
	}
}

// offering is CassKop offering the new kind besides its repair: the one line a new
// kind needs in the composition (in the product, one line in
// internal/operation/kinds/kinds.go or in an operator's Kinds).
type offering struct{ repair.Operator }

func (o offering) Kinds() []pub.Kind {
	return append(o.Operator.Kinds(), bounce{})
}

// TestNewKindIsOnePackage: a kind the CLI and the checkpoint were never told about gets
// its command (help in the operator's words, flags, checks), plans, writes and decodes
// its checkpoint, runs, survives a crash through resume, and is recorded as itself; a
// build that does not know it refuses its checkpoint with a clear message, changing
// nothing.
func TestNewKindIsOnePackage(t *testing.T) {
	// exec runs one command as a fresh process of a build with op; a crash (after
	// side effect crashAt) is exit -1.
	exec := func(w *world.World, op operator.Operator, crashAt int, args ...string) (string, string, int) {
		stdout, stderr, code, crashed := runBuild(context.Background(), w, op, w, crashAt, nil, args...)
		if crashed {
			code = -1
		}
		return stdout, stderr, code
	}
	with := offering{repair.Operator{Plugin: casskop.Plugin{}}}
	without := repair.Operator{Plugin: casskop.Plugin{}}
	run := []string{"bounce", "demo", "-n", "cassandra", "--rack", "rack1", "--yes", "--poll-interval", "1ms", "--timeout", "20s"}

	w := world.New(t, world.Opts{Nodes: 3})
	if help, _, code := exec(w, with, 0, "bounce", "--help"); code != 0 || !strings.Contains(help, "Bounce the pods of a CassandraCluster's rack.") ||
		!strings.Contains(help, "--rack") || !strings.Contains(help, "--dry-run") || !strings.Contains(help, "CLUSTER is the CassandraCluster's name") {
		t.Fatalf("help (exit %d):\n%s", code, help)
	}
	if _, stderr, code := exec(w, with, 0, "bounce", "demo", "-n", "cassandra"); code != 2 || !strings.Contains(stderr, "name the rack with --rack") {
		t.Fatalf("its own check: exit %d %s", code, stderr)
	}
	if out, _, code := exec(w, with, 0, "bounce", "demo", "-n", "cassandra", "--rack", "rack1", "--dry-run", "-o", "json"); code != 0 || !strings.Contains(out, `"kind": "bounce"`) {
		t.Fatalf("dry run (exit %d):\n%s", code, out)
	}

	// A crash right after the first pod deletion leaves a checkpoint of the new kind.
	before := podUIDs(w, rack1Pods)
	if _, stderr, code := exec(w, with, 5, run...); code != -1 {
		t.Fatalf("the run did not crash: %s", stderr)
	}
	if _, ok := w.CR().GetAnnotations()[checkpoint.Annotation]; !ok {
		t.Fatal("no checkpoint after the crash")
	}
	// A build without the kind refuses it (exit 3: not corrupt, another build may be
	// running it, so no advice to remove it) and changes nothing.
	ann := w.CR().GetAnnotations()[checkpoint.Annotation]
	for _, args := range [][]string{{"resume", "demo", "-n", "cassandra", "--yes"}, {"abort", "demo", "-n", "cassandra", "--yes"}} {
		_, stderr, code := exec(w, without, 0, args...)
		if code != 3 || !strings.Contains(stderr, `operation kind this build does not know: "bounce" (this build knows add-dc, remove-dc, repair-operator-state, replace-node, restart, scale-down, scale-up;`) ||
			!strings.Contains(stderr, "Finish it with the kubectl-cassandra that started it") || strings.Contains(stderr, "annotate") {
			t.Fatalf("%s by a build without the kind: exit %d %s", args[0], code, stderr)
		}
	}
	if w.CR().GetAnnotations()[checkpoint.Annotation] != ann {
		t.Fatal("the refused resume changed the checkpoint")
	}
	if _, stderr, code := exec(w, with, 0, "resume", "demo", "-n", "cassandra", "--yes"); code != 0 {
		t.Fatalf("resume: exit %d %s", code, stderr)
	}
	w.AssertRestarted(rack1Pods, before, "bounce")
	if last := w.LastOperation(); last == nil || last.Kind != "bounce" || last.Result != "succeeded" {
		t.Fatalf("last operation %+v", last)
	}
}
