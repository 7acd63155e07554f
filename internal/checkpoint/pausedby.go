package checkpoint

import "github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"

// The pause holders are part of the adapters' API (pkg/record): an adapter reads them
// off its operator's Deployment. The names here keep the plugin's code as it was.

// PausedByAnnotation is record.PausedByAnnotation.
const PausedByAnnotation = record.PausedByAnnotation

// PauseHolder is record.PauseHolder.
type PauseHolder = record.PauseHolder

// PauseHolders is record.PauseHolders.
func PauseHolders(ann map[string]string) ([]PauseHolder, error) { return record.PauseHolders(ann) }

// HolderIndex is record.HolderIndex.
func HolderIndex(hs []PauseHolder, id string) int { return record.HolderIndex(hs, id) }
