package nodetool

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Host IDs and addresses of the CODE-RENDERED 6-node cluster used by most fixtures.
const (
	hid1 = "2f1b8c5e-6a0e-4b0e-9c57-0d3b1f6a7e11" // 10.244.1.12 r1
	hid2 = "9a4d2c71-3b8e-4f2a-a1d0-5e6f7a8b9c02" // 10.244.2.17 r2
	hid3 = "c3e5f7a9-1b2d-4e6f-8a0b-1c2d3e4f5a63" // 10.244.3.9  r3
	hid4 = "4b6d8f0a-2c4e-4a6b-9c8d-0e1f2a3b4c74" // 10.244.1.13 r1
	hid5 = "e7f9a1b3-5c7d-4e9f-8a1b-2c3d4e5f6a85" // 10.244.2.18 r2
	hid6 = "0d2f4a6c-8e0a-4c2e-b4d6-3f5a7b9c1d96" // 10.244.3.10 r3
)

// fixture reads testdata/name.
func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// sharedDoc finds shared/cassandra/NODETOOL.md by walking up from the package directory
// (it is ../../../shared/cassandra/NODETOOL.md in the workspace), or returns "".
func sharedDoc(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		p := filepath.Join(dir, "shared", "cassandra", "NODETOOL.md")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
