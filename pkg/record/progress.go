package record

import "time"

// Progress is the last streaming progress seen for a step (a decommission's Unbootstrap
// sessions, a new node's Bootstrap sessions), so `status` on another machine shows it.
// It is optional and travels only with checkpoint writes that happen anyway (a step's
// record, the lease renewal): older plugins ignore the field, so it needs no schema
// version (the version is decided by the operation's kind only: Schema.Version).
type Progress struct {
	// Operation is "decommission" or "bootstrap"; Pod the node that streams.
	Operation string `json:"operation"`
	Pod       string `json:"pod"`
	// DoneBytes and TotalBytes are summed over the plan's sessions (bytes on the wire,
	// docs/how-it-works/streaming.md §2.2); Peers counts them.
	DoneBytes  int64 `json:"doneBytes"`
	TotalBytes int64 `json:"totalBytes"`
	Peers      int   `json:"peers"`
	// BytesPerSecond is measured between reads about a minute apart; 0 while unknown.
	BytesPerSecond float64 `json:"bytesPerSecond,omitempty"`
	// ETASeconds is (total-done)/rate; 0 while the rate is unknown.
	ETASeconds int64     `json:"etaSeconds,omitempty"`
	At         time.Time `json:"at"`
}

// Percent is the integer share done (100 for an empty total, as ProgressInfo prints).
func (p Progress) Percent() int {
	if p.TotalBytes <= 0 {
		return 100
	}
	return int(p.DoneBytes * 100 / p.TotalBytes)
}
