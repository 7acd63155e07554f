package nodetool

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Version is a Cassandra release. The stream throughput commands differ by release
// (docs/how-it-works/streaming.md §1.1, §1.2), so their argv and units depend on it.
type Version struct {
	Major, Minor int
	// Patch is PatchUnknown when the version named none ("4.0"): the rules of the
	// newest patch release apply then.
	Patch int
}

// PatchUnknown is the Patch of a version given without one.
const PatchUnknown = -1

func (v Version) String() string {
	if v.Patch == PatchUnknown {
		return fmt.Sprintf("%d.%d", v.Major, v.Minor)
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// AtLeast compares major.minor only.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// HasDataRates: 4.1 and later take MiB/s (-m), print doubles (-d) and have the
// entire-SSTable limiters (-e) (docs/how-it-works/streaming.md §1.1).
func (v Version) HasDataRates() bool { return v.AtLeast(4, 1) }

// oldMegabit: 3.11.0–3.11.11 and 4.0.0–4.0.1 counted a "megabit" as 131 072 bytes
// (CASSANDRA-17243, docs/how-it-works/streaming.md §1.2).
func (v Version) oldMegabit() bool {
	if v.Patch == PatchUnknown || v.Major != 3 && v.Major != 4 {
		return false
	}
	return v.Major == 3 && (v.Minor < 11 || v.Minor == 11 && v.Patch <= 11) ||
		v.Major == 4 && v.Minor == 0 && v.Patch <= 1
}

// ParseVersion reads a release version: "4.1.6", "5.0.3-SNAPSHOT", "3.11" (no patch).
func ParseVersion(s string) (Version, error) {
	core, _, _ := strings.Cut(strings.TrimSpace(s), "-")
	parts := strings.Split(core, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("cassandra version %q: want <major>.<minor>[.<patch>]", s)
	}
	nums := []int{0, 0, PatchUnknown}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return Version{}, fmt.Errorf("cassandra version %q: %q is not a number", s, p)
		}
		nums[i] = n
	}
	return Version{nums[0], nums[1], nums[2]}, nil
}

// ParseVersionOutput reads `nodetool version`: "ReleaseVersion: 4.1.6".
func ParseVersionOutput(out string) (Version, error) {
	for _, l := range splitLines(out) {
		l = strings.TrimSpace(l)
		if rest, ok := strings.CutPrefix(l, "ReleaseVersion: "); ok {
			return ParseVersion(rest)
		}
	}
	if e := firstErrorLine(out); e != "" {
		return Version{}, fmt.Errorf("version: nodetool printed an error: %s", quote(e))
	}
	return Version{}, errors.New("version: no \"ReleaseVersion:\" line")
}
