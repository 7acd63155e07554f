package checkpoint

import "github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"

// Progress is record.Progress: the last streaming progress seen for a step, so `status`
// on another machine shows it.
type Progress = record.Progress
