package release

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSnapshotFailsWithoutReadme: goreleaser fails a release whose archive file list names
// a missing file; snapshot.sh must too, before building anything, and say which file.
func TestSnapshotFailsWithoutReadme(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"LICENSE", shimName, "krew-manifest.yaml", "hack/release/snapshot.sh"} {
		b, err := os.ReadFile(repoPath(f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := run(dir, []string{"DIST=" + filepath.Join(dir, "dist")}, filepath.Join(dir, "hack/release/snapshot.sh"))
	if err == nil {
		t.Fatalf("snapshot.sh succeeded without README.md:\n%s", out)
	}
	if !strings.Contains(out, "README.md is missing") {
		t.Errorf("snapshot.sh failed without naming README.md:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "dist")); !os.IsNotExist(err) {
		t.Errorf("snapshot.sh created dist/ before checking its inputs (%v)", err)
	}
}

// fakeDist writes archives with distinct contents for the given platforms, and their
// checksums.txt, and returns the directory and the sha256 of each archive by name.
func fakeDist(t *testing.T, version string, platforms []string) (string, map[string]string) {
	t.Helper()
	dist := t.TempDir()
	sums := map[string]string{}
	var lines []string
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		name := archiveName(version, goos, goarch)
		data := []byte("archive of " + p)
		if err := os.WriteFile(filepath.Join(dist, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		sums[name] = hex.EncodeToString(sum[:])
		lines = append(lines, fmt.Sprintf("%s  %s", sums[name], name))
	}
	if err := os.WriteFile(filepath.Join(dist, "checksums.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dist, sums
}

func updateManifest(dist, out string, extra ...string) (string, error) {
	args := append([]string{"--dist", dist, "--manifest", repoPath("krew-manifest.yaml"), "-o", out}, extra...)
	return run(repoRoot, nil, repoPath("hack", "release", "update-krew-manifest.sh"), args...)
}

// TestUpdateKrewManifest: the script moves the manifest to the version found in dist/ and
// to each archive's real sha256, leaving the rest of the file as it was.
func TestUpdateKrewManifest(t *testing.T) {
	const version = "v9.8.7"
	dist, sums := fakeDist(t, version, allPlatforms)
	out := filepath.Join(t.TempDir(), "cassandra.yaml")
	if _, err := updateManifest(dist, out); err != nil {
		t.Fatal(err)
	}
	orig := readManifest(t, repoPath("krew-manifest.yaml"))
	m := readManifest(t, out)
	if m.Spec.Version != version {
		t.Errorf("spec.version = %q, want %q", m.Spec.Version, version)
	}
	if len(m.Spec.Platforms) != len(orig.Spec.Platforms) {
		t.Fatalf("%d platforms after the rewrite, %d before", len(m.Spec.Platforms), len(orig.Spec.Platforms))
	}
	for i, p := range m.Spec.Platforms {
		goos, goarch, _ := strings.Cut(p.key(), "/")
		name := archiveName(version, goos, goarch)
		if want := homepage + "/releases/download/" + version + "/" + name; p.URI != want {
			t.Errorf("%s: uri = %q, want %q", p.key(), p.URI, want)
		}
		if p.Sha256 != sums[name] {
			t.Errorf("%s: sha256 = %q, want %q", p.key(), p.Sha256, sums[name])
		}
		if p.key() != orig.Spec.Platforms[i].key() || p.Bin != orig.Spec.Platforms[i].Bin {
			t.Errorf("platform %d changed from %s/%s to %s/%s", i, orig.Spec.Platforms[i].key(), orig.Spec.Platforms[i].Bin, p.key(), p.Bin)
		}
	}
	if !strings.Contains(m.Spec.Caveats, "store/cassandra/"+version+"/") {
		t.Errorf("caveats still point at another version's store directory:\n%s", m.Spec.Caveats)
	}
	if m.Spec.Description != orig.Spec.Description || m.Spec.ShortDescription != orig.Spec.ShortDescription {
		t.Errorf("descriptions changed")
	}

	// --base-url only moves where the archives are downloaded from.
	if _, err := updateManifest(dist, out, "--base-url", "http://127.0.0.1:1/x/"); err != nil {
		t.Fatal(err)
	}
	for _, p := range readManifest(t, out).Spec.Platforms {
		if !strings.HasPrefix(p.URI, "http://127.0.0.1:1/x/kubectl-cassandra_"+version+"_") {
			t.Errorf("%s: uri %q does not use --base-url", p.key(), p.URI)
		}
	}
}

// TestUpdateKrewManifestRefuses: a manifest must never get a hash that is not the
// archive's, nor keep an old hash silently.
func TestUpdateKrewManifestRefuses(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cassandra.yaml")

	t.Run("stale checksums.txt", func(t *testing.T) {
		dist, _ := fakeDist(t, "v1.2.3", allPlatforms)
		name := archiveName("v1.2.3", "linux", "amd64")
		if err := os.WriteFile(filepath.Join(dist, name), []byte("rebuilt"), 0o644); err != nil {
			t.Fatal(err)
		}
		if log, err := updateManifest(dist, out); err == nil || !strings.Contains(log, "does not match") {
			t.Errorf("want a refusal for an archive that checksums.txt does not describe, got err=%v:\n%s", err, log)
		}
	})

	t.Run("missing platform", func(t *testing.T) {
		dist, sums := fakeDist(t, "v1.2.3", []string{"linux/amd64"})
		if log, err := updateManifest(dist, out); err == nil || !strings.Contains(log, "no archive") {
			t.Errorf("want a refusal when dist/ lacks platforms, got err=%v:\n%s", err, log)
		}
		// --partial: only what dist/ has is rewritten, the rest keeps its old hash.
		if log, err := updateManifest(dist, out, "--partial"); err != nil {
			t.Fatalf("--partial: %v\n%s", err, log)
		}
		orig := readManifest(t, repoPath("krew-manifest.yaml"))
		for i, p := range readManifest(t, out).Spec.Platforms {
			want := orig.Spec.Platforms[i].Sha256
			if p.key() == "linux/amd64" {
				want = sums[archiveName("v1.2.3", "linux", "amd64")]
			}
			if p.Sha256 != want {
				t.Errorf("--partial: %s sha256 = %s, want %s", p.key(), p.Sha256, want)
			}
		}
	})

	t.Run("two versions", func(t *testing.T) {
		dist, _ := fakeDist(t, "v1.2.3", allPlatforms)
		b, _ := os.ReadFile(filepath.Join(dist, "checksums.txt"))
		extra := fmt.Sprintf("%s  %s\n", strings.Repeat("a", 64), archiveName("v1.2.4", "linux", "amd64"))
		if err := os.WriteFile(filepath.Join(dist, "checksums.txt"), append(b, extra...), 0o644); err != nil {
			t.Fatal(err)
		}
		if log, err := updateManifest(dist, out); err == nil || !strings.Contains(log, "several versions") {
			t.Errorf("want a refusal for archives of two versions, got err=%v:\n%s", err, log)
		}
	})
}
