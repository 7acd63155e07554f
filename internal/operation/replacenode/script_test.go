package replacenode

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestBlockAddRemoveKeepsTheUsersScript(t *testing.T) {
	b, err := block("replace-1", "c-dc1-r1-2", "10.244.3.9", "/etc/cassandra/jvm-server.options")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, before string
		exists       bool
	}{
		{"no key", "", false},
		{"user script", "#!/bin/bash\necho hello\n", true},
		{"no final newline", "echo hello", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			with := withBlock(tc.before, tc.exists, "replace-1", b)
			if !hasBlock(with, "replace-1") || hasBlock(with, "replace-2") {
				t.Fatalf("block not found by its own ID only:\n%s", with)
			}
			if again := withBlock(with, true, "replace-1", b); again != with {
				t.Errorf("a second write changed the script:\n%s", again)
			}
			rest, empty := withoutBlock(with, "replace-1")
			if empty != !tc.exists {
				t.Errorf("empty = %v, want %v (rest %q)", empty, !tc.exists, rest)
			}
			if tc.exists && strings.TrimRight(rest, "\n") != strings.TrimRight(tc.before, "\n") {
				t.Errorf("rest %q, want the user's %q", rest, tc.before)
			}
		})
	}
}

func TestBlockRefusesShellSyntax(t *testing.T) {
	for _, pod := range []string{"a'b", "a b", "$(x)", "a;b"} {
		if _, err := block("op", pod, "10.0.0.1", "/etc/cassandra/jvm.options"); err == nil {
			t.Errorf("pod %q accepted", pod)
		}
	}
}

// TestBlockRunsOnOnePodOnly runs the block as CassKop's bootstrap.sh does (`set -e`
// around it, docs/how-it-works/replace.md §7.2): it appends the option on the named pod
// and exits 0 on every other (§7.3: CassKop's own one-liner exits 1 there).
func TestBlockRunsOnOnePodOnly(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on this machine")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "jvm-server.options")
	b, err := block("op", "pod-2", "10.244.3.9", file)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "pre_run.sh")
	if err := os.WriteFile(script, []byte(withBlock("", false, "op", b)), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	for _, host := range []string{"pod-1", "pod-2"} {
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "hostname"), []byte("#!/bin/sh\necho "+host+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sh, "-e", "-c", script)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("on %s the script failed: %v\n%s", host, err, out)
		}
		got, _ := os.ReadFile(file)
		want := ""
		if host == "pod-2" {
			want = "-Dcassandra.replace_address_first_boot=10.244.3.9\n"
		}
		if string(got) != want {
			t.Errorf("after %s: %s holds %q, want %q", host, file, got, want)
		}
	}
}

func TestOptionFileFollowsTheVersion(t *testing.T) {
	for v, want := range map[string]string{"3.11.11": "/etc/cassandra/jvm.options", "4.0.13": "/etc/cassandra/jvm-server.options",
		"4.1.6": "/etc/cassandra/jvm-server.options", "5.0.3": "/etc/cassandra/jvm-server.options"} {
		if got := optionFile("/etc/cassandra", v); got != want {
			t.Errorf("%s: %s, want %s", v, got, want)
		}
	}
}

// TestBlockIDsNameEveryWholeBlock: the operations whose blocks a script holds, a block
// missing its end mark not counted (withoutBlock would not take it out).
func TestBlockIDsNameEveryWholeBlock(t *testing.T) {
	a, _ := block("op-a", "p2", "10.0.0.3", "/etc/cassandra/jvm-server.options")
	b, _ := block("op-b", "p1", "10.0.0.2", "/etc/cassandra/jvm-server.options")
	script := withBlock(withBlock("echo user\n", true, "op-a", a), true, "op-b", b)
	if got := blockIDs(script); strings.Join(got, ",") != "op-a,op-b" {
		t.Errorf("blockIDs = %v, want [op-a op-b]", got)
	}
	begin, _ := marks("op-c")
	if got := blockIDs(script + begin + "\n"); strings.Join(got, ",") != "op-a,op-b" {
		t.Errorf("with a block cut short: blockIDs = %v, want [op-a op-b]", got)
	}
	rest, _ := withoutBlock(script, "op-a")
	if got := blockIDs(rest); strings.Join(got, ",") != "op-b" || !strings.HasPrefix(rest, "echo user\n") {
		t.Errorf("after taking op-a out: %v\n%s", got, rest)
	}
}
