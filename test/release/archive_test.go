package release

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// member is one file of a release archive.
type member struct {
	name string
	mode fs.FileMode
	dir  bool
	data []byte
}

func readTarGz(t *testing.T, path string) []member {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(zr)
	var ms []member
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, h.Name, err)
		}
		ms = append(ms, member{name: h.Name, mode: h.FileInfo().Mode(), dir: h.Typeflag == tar.TypeDir, data: data})
	}
	return ms
}

func readZip(t *testing.T, path string) []member {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer zr.Close()
	var ms []member
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("%s: %s: %v", path, f.Name, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %s: %v", path, f.Name, err)
		}
		ms = append(ms, member{name: f.Name, mode: f.Mode(), dir: f.FileInfo().IsDir(), data: data})
	}
	return ms
}

// checkBinaryPlatform reads the executable's header: a mix-up of GOOS/GOARCH between
// archives would install a binary that cannot run.
func checkBinaryPlatform(data []byte, goos, goarch string) error {
	r := bytes.NewReader(data)
	switch goos {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			return fmt.Errorf("not an ELF binary: %w", err)
		}
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
		if f.Machine != want {
			return fmt.Errorf("ELF machine %v, want %v", f.Machine, want)
		}
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			return fmt.Errorf("not a Mach-O binary: %w", err)
		}
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch]
		if f.Cpu != want {
			return fmt.Errorf("Mach-O cpu %v, want %v", f.Cpu, want)
		}
	case "windows":
		f, err := pe.NewFile(r)
		if err != nil {
			return fmt.Errorf("not a PE binary: %w", err)
		}
		want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[goarch]
		if f.Machine != want {
			return fmt.Errorf("PE machine %#x, want %#x", f.Machine, want)
		}
	default:
		return fmt.Errorf("unexpected GOOS %s", goos)
	}
	return nil
}

// TestArchiveContents checks every archive snapshot.sh built (or goreleaser did, with
// KCASS_RELEASE_DIST): exactly LICENSE, README.md, the completion shim, the man pages
// .goreleaser.yaml lists (man/, from hack/docs) and the binary at the root, executables executable, the same bytes as
// the repository's files, a binary for the right platform built with the release flags,
// and a checksums.txt that matches.
func TestArchiveContents(t *testing.T) {
	s := snapshot(t)
	m := readManifest(t, repoPath("krew-manifest.yaml"))
	version := m.Spec.Version

	repoFiles := map[string][]byte{}
	for _, f := range []string{"LICENSE", "README.md", shimName} {
		b, err := os.ReadFile(repoPath(f))
		if err != nil {
			t.Fatal(err)
		}
		repoFiles[f] = b
	}

	manPages := goreleaserManPages(t)
	var wantSums []string
	for _, p := range s.platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		name := archiveName(version, goos, goarch)
		archive := filepath.Join(s.dist, name)
		wantSums = append(wantSums, sha256File(t, archive)+"  "+name)
		t.Run(p, func(t *testing.T) {
			bin := "kubectl-cassandra"
			var ms []member
			if goos == "windows" {
				bin += ".exe"
				ms = readZip(t, archive)
			} else {
				ms = readTarGz(t, archive)
				// GNU tar's own listing too: what a user (and krew's extractor) sees,
				// with no "./" prefixes or directory entries.
				out, err := run(repoRoot, nil, "tar", "-tzf", archive)
				if err != nil {
					t.Fatal(err)
				}
				wantList := "LICENSE\nREADME.md\n" + shimName + "\n" + strings.Join(manPages, "\n") + "\n" + bin + "\n"
				if out != wantList {
					t.Errorf("tar -tzf %s:\n%s\nwant:\n%s", name, out, wantList)
				}
			}
			var names []string
			for _, mb := range ms {
				names = append(names, mb.name)
			}
			// goreleaser's order: archives[].files as listed, then the binary.
			if want := slices.Concat([]string{"LICENSE", "README.md", shimName}, manPages, []string{bin}); !slices.Equal(names, want) {
				t.Fatalf("%s holds %q, want exactly %q at the root", name, names, want)
			}
			for _, mb := range ms {
				if mb.dir || !mb.mode.IsRegular() {
					t.Errorf("%s: %s is not a regular file (mode %v)", name, mb.name, mb.mode)
				}
				exec := mb.mode&0o111 == 0o111
				switch mb.name {
				case bin, shimName:
					if !exec {
						t.Errorf("%s: %s mode %v, want executable", name, mb.name, mb.mode)
					}
				default:
					if exec || mb.mode.Perm() != 0o644 {
						t.Errorf("%s: %s mode %v, want -rw-r--r--", name, mb.name, mb.mode)
					}
					if strings.HasPrefix(mb.name, "man/") {
						if !bytes.Contains(mb.data, []byte(".TH ")) {
							t.Errorf("%s: %s is no man page", name, mb.name)
						}
					} else if !bytes.Equal(mb.data, repoFiles[mb.name]) {
						t.Errorf("%s: %s differs from the repository's", name, mb.name)
					}
				}
				if mb.name == shimName && !bytes.Equal(mb.data, repoFiles[shimName]) {
					t.Errorf("%s: %s differs from the repository's", name, mb.name)
				}
			}
			data := ms[len(ms)-1].data
			if err := checkBinaryPlatform(data, goos, goarch); err != nil {
				t.Errorf("%s: %s: %v", name, bin, err)
			}
			checkBuildInfo(t, name, data, goos, goarch, version)
		})
	}

	sums, err := os.ReadFile(filepath.Join(s.dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// goreleaser and snapshot.sh sort checksums.txt by file name.
	slices.SortFunc(wantSums, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	if got := strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n"); !slices.Equal(got, wantSums) {
		t.Errorf("checksums.txt:\n%s\nwant:\n%s", sums, strings.Join(wantSums, "\n"))
	}
}

// checkBuildInfo reads the Go build settings embedded in the binary and the strings the
// linker set: the flags that make the build reproducible and the version identity must be
// those of .goreleaser.yaml. (With -trimpath, go does not record -ldflags in the build
// info, so the -X values are looked for in the binary itself.)
func checkBuildInfo(t *testing.T, name string, data []byte, goos, goarch, version string) {
	t.Helper()
	bi, err := buildinfo.Read(bytes.NewReader(data))
	if err != nil {
		t.Errorf("%s: no Go build info: %v", name, err)
		return
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	for k, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "GOOS": goos, "GOARCH": goarch} {
		if settings[k] != want {
			t.Errorf("%s: build setting %s = %q, want %q", name, k, settings[k], want)
		}
	}
	if bi.Path != modulePath+"/cmd/kubectl-cassandra" {
		t.Errorf("%s: main package %q", name, bi.Path)
	}
	if !bytes.Contains(data, []byte(version)) {
		t.Errorf("%s: the version %s is not in the binary (-X ...version.Version)", name, version)
	}
	if commit, err := run(repoRoot, nil, "git", "rev-parse", "HEAD"); err == nil {
		if commit = strings.TrimSpace(commit); !bytes.Contains(data, []byte(commit)) {
			t.Errorf("%s: the commit %s is not in the binary (-X ...version.Commit)", name, commit)
		}
	}
	if err := checkStripped(data, goos); err != nil {
		t.Errorf("%s: %v", name, err)
	}
}

// checkStripped: -s -w (as goreleaser's ldflags) leave no DWARF and, on ELF, no symbol
// table; the archives would be ~30% larger otherwise.
func checkStripped(data []byte, goos string) error {
	r := bytes.NewReader(data)
	var dwarfErr error
	switch goos {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			return err
		}
		if _, err := f.Symbols(); err == nil {
			return errors.New("ELF symbol table present: -s missing from -ldflags")
		}
		_, dwarfErr = f.DWARF()
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			return err
		}
		_, dwarfErr = f.DWARF()
	case "windows":
		f, err := pe.NewFile(r)
		if err != nil {
			return err
		}
		_, dwarfErr = f.DWARF()
	}
	if dwarfErr == nil {
		return errors.New("DWARF debug info present: -w missing from -ldflags")
	}
	return nil
}

// TestChecksumsFormat: checksums.txt is read by people and by `sha256sum -c`; keep the
// goreleaser layout "<hex>  <name>" with one line per archive.
func TestChecksumsFormat(t *testing.T) {
	s := snapshot(t)
	f, err := os.Open(filepath.Join(s.dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || !sha256Hex.MatchString(sum) || strings.ContainsAny(name, " /") {
			t.Errorf("checksums.txt line %q is not \"<sha256>  <file>\"", sc.Text())
		}
		n++
	}
	if n != len(s.platforms) {
		t.Errorf("checksums.txt has %d lines, want one per archive (%d)", n, len(s.platforms))
	}
	if _, err := run(s.dist, nil, "sha256sum", "--strict", "-c", "checksums.txt"); err != nil {
		t.Error(err)
	}
}

// goreleaserManPages are the man pages .goreleaser.yaml's archives carry (man/…), in its
// order.
func goreleaserManPages(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(repoPath(".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "- man/"); ok {
			out = append(out, "man/"+f)
		}
	}
	if len(out) == 0 {
		t.Fatal(".goreleaser.yaml's archives list no man pages (man/…)")
	}
	return out
}
