package nodetool

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRemoveNodeIsNeverAskedAgain: a cut removenode call is unknown, and only the
// world (removenode status, the ring) tells whether it runs: it is not retried.
func TestRemoveNodeIsNeverAskedAgain(t *testing.T) {
	ex := &scriptedExec{errs: []error{errStream, nil}}
	outcome, _ := Client{Exec: ex, Retry: passing}.RemoveNode(context.Background(), "pod", hid3)
	assert.Equal(t, RemoveUnknown, outcome)
	require.Len(t, ex.asked, 1, "a second removenode would start a second removal")
	assert.Equal(t, "removenode "+hid3, strings.Join(ex.asked[0][len(ex.asked[0])-2:], " "))
}

// TestRemovalStatusIsARead: asked again after a passing exec failure, parsed.
func TestRemovalStatusIsARead(t *testing.T) {
	ex := &scriptedExec{out: "RemovalStatus: Removing token (-42). Waiting for replication confirmation from [/10.244.1.12,/10.244.2.17].\n", errs: []error{errStream, nil}}
	st, err := Client{Exec: ex, Retry: passing}.RemovalStatus(context.Background(), "pod")
	require.NoError(t, err)
	assert.Len(t, ex.asked, 2)
	assert.Equal(t, RemovalStatus{Removing: true, Token: "-42", Waiting: []string{"10.244.1.12", "10.244.2.17"}}, st)
	assert.Equal(t, "removenode status", strings.Join(ex.asked[0][len(ex.asked[0])-2:], " "))
}
