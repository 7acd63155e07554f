package release

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate runs krew's validate-krew-manifest on a manifest file (named <plugin>.yaml:
// the validator takes the plugin name from the file name, as krew-index stores it).
func validate(t *testing.T, manifest string, env []string, args ...string) (string, error) {
	t.Helper()
	bin := tool(t, "validate-krew-manifest")
	return run(filepath.Dir(manifest), env, bin, append([]string{"-manifest", manifest}, args...)...)
}

// copyAs copies the committed manifest to <dir>/<name>, applying the replacements.
func copyAs(t *testing.T, dir, name string, replace ...string) string {
	t.Helper()
	b, err := os.ReadFile(repoPath("krew-manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(s, replace[i]) {
			t.Fatalf("krew-manifest.yaml has no %q to replace", replace[i])
		}
		s = strings.Replace(s, replace[i], replace[i+1], 1)
	}
	out := filepath.Join(dir, name)
	if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKrewValidatorAcceptsManifest runs krew's own validator (the krew-index CI check)
// on the committed manifest, structure only: the uris point at a release that does not
// exist yet. TestKrewValidatorInstallsEveryPlatform covers the install part.
func TestKrewValidatorAcceptsManifest(t *testing.T) {
	manifest := copyAs(t, t.TempDir(), "cassandra.yaml")
	out, err := validate(t, manifest, nil, "-skip-install")
	if err != nil {
		t.Fatalf("krew-manifest.yaml rejected by validate-krew-manifest: %v", err)
	}
	for _, want := range []string{"structural validation OK", "all spec.platform[] items are used", "no overlapping spec.platform[].selector"} {
		if !strings.Contains(out, want) {
			t.Errorf("validator output lacks %q:\n%s", want, out)
		}
	}
}

// TestKrewValidatorRejectsBrokenManifests makes sure the validator really checks what the
// test above relies on: each of these mistakes must be refused.
func TestKrewValidatorRejectsBrokenManifests(t *testing.T) {
	m := readManifest(t, repoPath("krew-manifest.yaml"))
	first := m.Spec.Platforms[0]
	cases := map[string]struct {
		file    string
		replace []string
		want    string
	}{
		"file name is not the plugin name": {file: "krew-manifest.yaml", want: "plugin should be named"},
		"bad sha256":                       {file: "cassandra.yaml", replace: []string{"sha256: " + first.Sha256, "sha256: " + strings.Repeat("g", 64)}, want: "sha256"},
		"duplicate platform": {file: "cassandra.yaml", replace: []string{
			"os: " + m.Spec.Platforms[1].Selector.MatchLabels["os"] + "\n          arch: " + m.Spec.Platforms[1].Selector.MatchLabels["arch"],
			"os: " + first.Selector.MatchLabels["os"] + "\n          arch: " + first.Selector.MatchLabels["arch"],
		}, want: "overlapping"},
		"unsupported platform": {file: "cassandra.yaml", replace: []string{"arch: " + first.Selector.MatchLabels["arch"], "arch: s390x"}, want: "doesn't match any supported platforms"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			manifest := copyAs(t, t.TempDir(), c.file, c.replace...)
			out, err := validate(t, manifest, nil, "-skip-install")
			if err == nil {
				t.Fatalf("validator accepted a manifest with %s:\n%s", name, out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("validator refused it, but not for %q:\n%s", c.want, out)
			}
		})
	}
}

// TestKrewValidatorInstallsEveryPlatform runs the validator's full check, as krew-index's
// CI does: `kubectl krew install` of each platform with KREW_OS/KREW_ARCH overridden, then
// a LICENSE must exist. The validator has no --archive option and downloads the uris with
// Go's HTTP client (no file://), so the archives of the snapshot are served from a local
// HTTP server and the manifest is rewritten to point at it, with their real sha256.
func TestKrewValidatorInstallsEveryPlatform(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP (-short): needs the archives of all 6 platforms; TestKrewInstallArchive installs the host's")
	}
	requireKubectl(t)
	s := snapshot(t)
	// Only the archives are served: a missing or misnamed one is a 404 and fails the install.
	srv := httptest.NewServer(http.FileServer(http.Dir(s.dist)))
	defer srv.Close()
	manifest := rewriteManifest(t, s.dist, t.TempDir(), "--base-url", srv.URL)

	// The validator runs `kubectl krew install` with only KREW_ROOT, KREW_OS, KREW_ARCH and
	// PATH set, so kubectl-krew has to be on PATH.
	path := krewBinDir(t) + string(os.PathListSeparator) + os.Getenv("PATH")
	out, err := validate(t, manifest, envWith(map[string]string{"PATH": path}), "-v=2")
	if err != nil {
		t.Fatalf("validate-krew-manifest (with install) failed: %v", err)
	}
	m := readManifest(t, manifest)
	if want := "all 6 spec.platforms installed fine"; len(m.Spec.Platforms) != 6 || !strings.Contains(out, want) {
		t.Errorf("validator output lacks %q:\n%s", want, out)
	}
}
