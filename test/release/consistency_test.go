package release

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

// goreleaserConfig is the part of .goreleaser.yaml (schema version 2) the tests read.
type goreleaserConfig struct {
	Version     int    `json:"version"`
	ProjectName string `json:"project_name"`
	Builds      []struct {
		ID           string     `json:"id"`
		Main         string     `json:"main"`
		Binary       string     `json:"binary"`
		Env          []string   `json:"env"`
		Goos         []string   `json:"goos"`
		Goarch       []string   `json:"goarch"`
		Ignore       []goosArch `json:"ignore"`
		Flags        []string   `json:"flags"`
		Ldflags      []string   `json:"ldflags"`
		ModTimestamp string     `json:"mod_timestamp"`
	} `json:"builds"`
	Archives []struct {
		ID              string   `json:"id"`
		IDs             []string `json:"ids"`
		Formats         []string `json:"formats"`
		FormatOverrides []struct {
			Goos    string   `json:"goos"`
			Formats []string `json:"formats"`
		} `json:"format_overrides"`
		NameTemplate    string `json:"name_template"`
		WrapInDirectory any    `json:"wrap_in_directory"`
		Files           []any  `json:"files"`
	} `json:"archives"`
	Checksum struct {
		NameTemplate string `json:"name_template"`
	} `json:"checksum"`
	Snapshot struct {
		VersionTemplate string `json:"version_template"`
	} `json:"snapshot"`
}

// goosArch is one builds[].ignore entry.
type goosArch struct {
	Goos   string `json:"goos"`
	Goarch string `json:"goarch"`
}

func readGoreleaser(t *testing.T) goreleaserConfig {
	t.Helper()
	b, err := os.ReadFile(repoPath(".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c goreleaserConfig
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	return c
}

// spaceInBraces normalises "{{.Version}}" and "{{ .Version }}" to one spelling.
var spaceInBraces = regexp.MustCompile(`\{\{\s*(.*?)\s*\}\}`)

func normTemplate(s string) string { return spaceInBraces.ReplaceAllString(s, "{{ $1 }}") }

// renderName renders an archive name_template the way goreleaser does (text/template over
// its context). Only the fields an archive name can use are provided, and a missing key is
// an error: a template using anything else must be checked by hand, not pass silently.
func renderName(t *testing.T, tmpl, project, tag, goos, goarch string) string {
	t.Helper()
	tp, err := template.New("name").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		t.Fatalf("name_template %q: %v (uses goreleaser functions this test does not emulate?)", tmpl, err)
	}
	var b bytes.Buffer
	err = tp.Execute(&b, map[string]string{
		"ProjectName": project,
		"Tag":         tag,
		"Version":     strings.TrimPrefix(tag, "v"), // goreleaser's .Version has no leading v
		"Os":          goos,
		"Arch":        goarch,
	})
	if err != nil {
		t.Fatalf("name_template %q: %v", tmpl, err)
	}
	return b.String()
}

var (
	semverTag = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

const (
	homepage    = "https://github.com/kubectl-cassandra/kubectl-cassandra"
	versionPkg  = modulePath + "/internal/version"
	shimName    = "kubectl_complete-cassandra"
	projectName = "kubectl-cassandra"
)

// TestGoreleaserMatchesKrewManifest: the archive goreleaser publishes for each platform is
// exactly the one the Krew manifest downloads, and holds the binary the manifest runs.
func TestGoreleaserMatchesKrewManifest(t *testing.T) {
	c := readGoreleaser(t)
	m := readManifest(t, repoPath("krew-manifest.yaml"))

	if c.Version != 2 {
		t.Errorf(".goreleaser.yaml: version = %d, want 2 (goreleaser v2 refuses other schemas)", c.Version)
	}
	if c.ProjectName != projectName {
		t.Errorf("project_name = %q, want %q", c.ProjectName, projectName)
	}
	if len(c.Builds) != 1 || len(c.Archives) != 1 {
		t.Fatalf("want exactly one build and one archive, got %d and %d", len(c.Builds), len(c.Archives))
	}
	b, a := c.Builds[0], c.Archives[0]

	if b.ID != "kubectl-cassandra" || b.Main != "./cmd/kubectl-cassandra" || b.Binary != "kubectl-cassandra" {
		t.Errorf("build id/main/binary = %q/%q/%q, want kubectl-cassandra/./cmd/kubectl-cassandra/kubectl-cassandra", b.ID, b.Main, b.Binary)
	}
	if !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("build env %v lacks CGO_ENABLED=0 (static binaries for every platform)", b.Env)
	}
	if !slices.Contains(b.Flags, "-trimpath") {
		t.Errorf("build flags %v lack -trimpath (reproducible builds)", b.Flags)
	}
	if normTemplate(b.ModTimestamp) != "{{ .CommitTimestamp }}" {
		t.Errorf("mod_timestamp = %q, want {{ .CommitTimestamp }}", b.ModTimestamp)
	}
	ld := normTemplate(strings.Join(b.Ldflags, " "))
	for _, want := range []string{
		"-s -w",
		// v-prefixed, so that `kubectl cassandra version` prints the tag and spec.version.
		"-X " + versionPkg + ".Version=v{{ .Version }}",
		"-X " + versionPkg + ".Commit={{ .Commit }}",
		"-X " + versionPkg + ".Date={{ .Date }}",
	} {
		if !strings.Contains(ld, want) {
			t.Errorf("ldflags %q lack %q", ld, want)
		}
	}

	if !slices.Equal(a.IDs, []string{b.ID}) {
		t.Errorf("archives[0].ids = %v, want [%s]", a.IDs, b.ID)
	}
	if a.WrapInDirectory != false {
		t.Errorf("wrap_in_directory = %v, want false: Krew's bin: is a path at the archive root", a.WrapInDirectory)
	}
	var files []string
	for _, f := range a.Files {
		s, ok := f.(string)
		if !ok {
			t.Fatalf("archives[0].files entry %v is not a plain file name", f)
		}
		// A glob is skipped silently when nothing matches; a bare name fails the release.
		if strings.ContainsAny(s, "*?[") {
			t.Errorf("archives[0].files entry %q is a glob; use the bare name so a missing file fails the release", s)
		}
		files = append(files, s)
	}
	if !slices.Contains(files, "LICENSE") {
		t.Errorf("archives[0].files %v lack LICENSE (krew-index requires it in the archive)", files)
	}
	if !slices.Contains(files, shimName) {
		t.Errorf("archives[0].files %v lack %s (the caveats point at it)", files, shimName)
	}
	if c.Checksum.NameTemplate != "checksums.txt" {
		t.Errorf("checksum.name_template = %q, want checksums.txt", c.Checksum.NameTemplate)
	}
	if c.Snapshot.VersionTemplate == "" {
		t.Errorf("snapshot.version_template is empty")
	}

	// Platforms: goos × goarch minus ignore, against the manifest's selectors.
	var built []string
	for _, goos := range b.Goos {
		for _, goarch := range b.Goarch {
			if !slices.Contains(b.Ignore, goosArch{goos, goarch}) {
				built = append(built, goos+"/"+goarch)
			}
		}
	}
	var listed []string
	for _, p := range m.Spec.Platforms {
		listed = append(listed, p.key())
	}
	slices.Sort(built)
	slices.Sort(listed)
	if !slices.Equal(built, listed) {
		t.Errorf("goreleaser builds %v but the manifest lists %v", built, listed)
	}
	want := slices.Clone(allPlatforms)
	slices.Sort(want)
	if !slices.Equal(built, want) {
		t.Errorf("goreleaser builds %v, want %v", built, want)
	}

	seen := map[string]string{}
	for _, p := range m.Spec.Platforms {
		key := p.key()
		goos, goarch, _ := strings.Cut(key, "/")
		if len(p.Selector.MatchLabels) != 2 || len(p.Selector.MatchExpressions) != 0 {
			t.Errorf("%s: selector must be matchLabels {os, arch} only, got %+v", key, p.Selector)
		}
		format := a.Formats[0]
		for _, o := range a.FormatOverrides {
			if o.Goos == goos {
				format = o.Formats[0]
			}
		}
		wantName := renderName(t, a.NameTemplate, c.ProjectName, m.Spec.Version, goos, goarch) + "." + format
		if got := path.Base(p.URI); got != wantName {
			t.Errorf("%s: uri file %q, but goreleaser publishes %q", key, got, wantName)
		}
		if wantURI := homepage + "/releases/download/" + m.Spec.Version + "/" + wantName; p.URI != wantURI {
			t.Errorf("%s: uri = %q, want %q", key, p.URI, wantURI)
		}
		// The name snapshot.sh writes (and the other tests look for) is goreleaser's too.
		if got := archiveName(m.Spec.Version, goos, goarch); got != wantName {
			t.Errorf("%s: snapshot.sh writes %q, goreleaser %q", key, got, wantName)
		}
		wantBin := b.Binary
		if goos == "windows" {
			wantBin += ".exe" // goreleaser appends .exe to windows binaries
		}
		if p.Bin != wantBin {
			t.Errorf("%s: bin = %q, want %q", key, p.Bin, wantBin)
		}
		if !sha256Hex.MatchString(p.Sha256) {
			t.Errorf("%s: sha256 %q is not 64 lowercase hex digits", key, p.Sha256)
		}
		if other, dup := seen[p.Sha256]; dup {
			t.Errorf("%s and %s have the same sha256: a placeholder or copy-paste, not two archives", key, other)
		}
		seen[p.Sha256] = key
		if p.Files != nil {
			t.Errorf("%s: files: is set; leave it out so krew extracts everything (LICENSE, the shim)", key)
		}
	}
}

// TestKrewManifestFields checks what krew-index reviewers ask for beyond krew's validator.
func TestKrewManifestFields(t *testing.T) {
	m := readManifest(t, repoPath("krew-manifest.yaml"))
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" {
		t.Errorf("apiVersion/kind = %s/%s", m.APIVersion, m.Kind)
	}
	if m.Metadata.Name != "cassandra" {
		t.Errorf("metadata.name = %q, want cassandra (krew links kubectl-cassandra)", m.Metadata.Name)
	}
	if !semverTag.MatchString(m.Spec.Version) {
		t.Errorf("spec.version %q is not a v-prefixed semver", m.Spec.Version)
	}
	if m.Spec.Homepage != homepage {
		t.Errorf("homepage = %q, want %q", m.Spec.Homepage, homepage)
	}
	sd := m.Spec.ShortDescription
	if sd == "" || strings.Contains(sd, "\n") || len([]rune(sd)) > 50 {
		t.Errorf("shortDescription %q: must be one non-empty line of at most 50 characters (has %d)", sd, len([]rune(sd)))
	}
	for field, text := range map[string]string{"description": m.Spec.Description, "caveats": m.Spec.Caveats} {
		if strings.TrimSpace(text) == "" {
			t.Errorf("%s is empty", field)
		}
		for i, line := range strings.Split(text, "\n") {
			if n := len([]rune(line)); n > 80 {
				t.Errorf("%s line %d has %d characters, wrap at 80: %q", field, i+1, n, line)
			}
		}
	}
	// The shim's location must be the one krew really uses for this version.
	if want := "store/cassandra/" + m.Spec.Version + "/" + shimName; !strings.Contains(m.Spec.Caveats, want) {
		t.Errorf("caveats do not point at %s", want)
	}
	for _, rbac := range []string{"cassandraclusters", "pods/exec", "statefulsets", "persistentvolumeclaims", "deployments", "events"} {
		if !strings.Contains(m.Spec.Caveats, rbac) {
			t.Errorf("caveats do not list the RBAC needed on %s", rbac)
		}
	}
}

// TestSnapshotScriptFollowsGoreleaser: snapshot.sh stands in for goreleaser offline, so
// its file list and version variables must be goreleaser's.
func TestSnapshotScriptFollowsGoreleaser(t *testing.T) {
	c := readGoreleaser(t)
	src, err := os.ReadFile(repoPath("hack", "release", "snapshot.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^FILES=\(([^)]*)\)`).FindSubmatch(src)
	if m == nil {
		t.Fatal("hack/release/snapshot.sh has no FILES=(...) line")
	}
	var want []string
	for _, f := range c.Archives[0].Files {
		s, _ := f.(string)
		// The man pages are generated (hack/docs) by goreleaser's before hook and by
		// snapshot.sh alike; hack/docs's TestGoreleaserManPages keeps their list whole.
		if !strings.HasPrefix(s, "man/") {
			want = append(want, s)
		}
	}
	if got := strings.Fields(string(m[1])); !slices.Equal(got, want) {
		t.Errorf("snapshot.sh FILES = %v, .goreleaser.yaml files = %v", got, want)
	}
	for _, v := range []string{".Version=", ".Commit=", ".Date="} {
		if !bytes.Contains(src, []byte("$VPKG"+v)) {
			t.Errorf("snapshot.sh does not set %s%s", versionPkg, v)
		}
	}
	if !bytes.Contains(src, []byte("VPKG="+versionPkg+"\n")) {
		t.Errorf("snapshot.sh VPKG is not %s", versionPkg)
	}
}

// canonicalApache2 is the sha256 of the Apache License 2.0 text as published at
// https://www.apache.org/licenses/LICENSE-2.0.txt (also Debian's common-licenses copy).
const canonicalApache2 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

func TestLicenseIsApache2(t *testing.T) {
	if got := sha256File(t, repoPath("LICENSE")); got != canonicalApache2 {
		b, _ := os.ReadFile(repoPath("LICENSE"))
		t.Errorf("LICENSE sha256 %s differs from the standard Apache 2.0 text (%s); starts with %q", got, canonicalApache2, string(b[:min(len(b), 120)]))
	}
}

// TestCompletionShim runs the shim against a stand-in kubectl that prints its arguments,
// to check it forwards every word unchanged (empty and spaced ones too: the shell gives
// "" for the word being completed).
func TestCompletionShim(t *testing.T) {
	shim := repoPath(shimName)
	fi, err := os.Stat(shim)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&0o111 != 0o111 {
		t.Errorf("%s mode %v is not executable by all; kubectl only runs executable files", shimName, fi.Mode())
	}
	b, err := os.ReadFile(shim)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("#!/usr/bin/env sh\n")) {
		t.Errorf("%s does not start with #!/usr/bin/env sh", shimName)
	}
	if !bytes.Contains(b, []byte(`kubectl cassandra __complete "$@"`)) {
		t.Errorf(`%s does not run kubectl cassandra __complete "$@"`, shimName)
	}

	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "kubectl"), []byte("#!/bin/sh\nfor a in \"$@\"; do printf '<%s>\\n' \"$a\"; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shim, "scale", "a b", "")
	cmd.Env = envWith(map[string]string{"PATH": fake + string(os.PathListSeparator) + os.Getenv("PATH")})
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", shimName, err, out)
	}
	if want := "<cassandra>\n<__complete>\n<scale>\n<a b>\n<>\n"; string(out) != want {
		t.Errorf("kubectl got arguments\n%s\nwant\n%s", out, want)
	}
}
