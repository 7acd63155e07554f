package nodetool

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fencedBlocks returns the contents of the ``` blocks of a Markdown file, each line
// ending in "\n", with the line number of its opening fence.
func fencedBlocks(md string) (blocks []string, lines []int) {
	var (
		in    bool
		cur   strings.Builder
		start int
	)
	for i, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			if in {
				blocks, lines = append(blocks, cur.String()), append(lines, start)
				cur.Reset()
			}
			in, start = !in, i+1
			continue
		}
		if in {
			cur.WriteString(l + "\n")
		}
	}
	return blocks, lines
}

func readSharedDoc(t *testing.T) string {
	t.Helper()
	p := sharedDoc(t)
	if p == "" {
		t.Skip("../../../shared/cassandra/NODETOOL.md not present: the shared reference notes are not checked out next to the repo")
	}
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// TestSharedNodetoolFixtures parses every sample of the shared reference notes: each
// fenced block starting with "Datacenter:" must be a ring with at least one node, each
// one starting with "Mode:" a netstats output, and the info and describecluster samples
// must parse too.
func TestSharedNodetoolFixtures(t *testing.T) {
	md := readSharedDoc(t)
	blocks, lines := fencedBlocks(md)
	var status, netstats int
	for i, b := range blocks {
		switch {
		case strings.HasPrefix(b, "Datacenter:"):
			status++
			r, err := ParseStatus(b)
			if assert.NoError(t, err, "NODETOOL.md block at line %d", lines[i]) {
				assert.NotEmpty(t, r.Nodes, "NODETOOL.md block at line %d", lines[i])
			}
		case strings.HasPrefix(b, "Mode:"):
			netstats++
			_, err := ParseNetstats(b)
			assert.NoError(t, err, "NODETOOL.md block at line %d", lines[i])
		case strings.HasPrefix(b, "ID "):
			_, err := ParseInfo(b)
			assert.NoError(t, err, "NODETOOL.md block at line %d", lines[i])
		case strings.HasPrefix(b, "Cluster Information:"):
			_, err := ParseDescribeCluster(b)
			assert.NoError(t, err, "NODETOOL.md block at line %d", lines[i])
		}
	}
	assert.GreaterOrEqual(t, status, 13, "status samples found")
	assert.GreaterOrEqual(t, netstats, 7, "netstats samples found")
}

// TestFixturesMatchSharedDoc checks that the fixtures copied from the shared notes are
// still byte-identical to one of its blocks (see testdata/README.md).
func TestFixturesMatchSharedDoc(t *testing.T) {
	md := readSharedDoc(t)
	blocks, _ := fencedBlocks(md)
	inDoc := map[string]bool{}
	for _, b := range blocks {
		inDoc[b] = true
	}
	for _, f := range []string{
		"status-5.0-statustest-verbatim.txt", "status-4.1-single-token.txt", "status-5.0-doc-sloppy.txt",
		"status-5.0-doc-dc2-down.txt", "status-4.1-steady.txt", "status-4.1-leaving.txt",
		"status-4.1-after-decommission.txt", "status-4.1-down-unknown-load.txt", "status-4.1-owns-note.txt",
		"status-4.1-2dc.txt", "status-3.11-steady.txt", "status-3.11-leaving.txt", "status-3.11-2dc.txt",
		"netstats-4.1-leaving-streaming.txt", "netstats-4.1-normal-receiving.txt", "netstats-4.1-leaving-idle.txt",
		"netstats-4.1-decommissioned.txt", "netstats-5.0-decommission-failed.txt", "netstats-4.1-starting.txt",
		"netstats-3.11-leaving-streaming.txt",
		"info-4.1-steady.txt", "info-4.1-decommissioned.txt", "info-3.11-steady.txt", "info-5.0-decommissioned.txt",
		"describecluster-4.1-leaving.txt", "describecluster-3.11.txt",
	} {
		assert.True(t, inDoc[fixture(t, f)], "testdata/%s is no longer a block of NODETOOL.md", f)
	}
}
