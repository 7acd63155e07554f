package record

import "time"

// StreamThroughput is the stream throughput an operation sets on the nodes that stream
// (--stream-throughput) and what each of them had before: the record that lets resume
// and abort put every node back (docs/how-it-works/streaming.md §1). It is part of the
// checkpoint (streamThroughput); checkpoints without it decode as before.
type StreamThroughput struct {
	// Rate is what the operation sets on every limiter it changes.
	Rate Rate `json:"rate"`
	// InterDC: the inter-DC limiters are set too (a cluster of several datacenters).
	InterDC bool `json:"interDC,omitempty"`
	// Version is the Cassandra version the rate was checked against when planned.
	Version string `json:"version,omitempty"`
	// Sources, when set, are the pods a step without a pod acts on (a scale-up: the
	// nodes that stream to the joining ones); a step about one pod acts on it alone.
	Sources []string `json:"sources,omitempty"`
	// Loads are the bytes each node is expected to stream, by pod (the plan's estimate).
	Loads map[string]int64 `json:"loads,omitempty"`
	// Recorded are the values read on each node before anything was set on it: written
	// to the checkpoint before the set acts, so they are never lost.
	Recorded []RecordedThroughput `json:"recorded,omitempty"`
}

// Rate is one limiter's setting: Unlimited, or Value in Unit ("Mb/s", "MiB/s").
type Rate struct {
	Unlimited bool    `json:"unlimited,omitempty"`
	Value     float64 `json:"value,omitempty"`
	Unit      string  `json:"unit,omitempty"`
}

// RecordedThroughput is what one node's limiters read before the operation set them.
type RecordedThroughput struct {
	Pod string `json:"pod"`
	// Version is the node's Cassandra version (`nodetool version`): the argv and units
	// of its limiters depend on it.
	Version string `json:"version"`
	// Limiters are the values read, by limiter (stream, entire-sstable, inter-dc, …).
	Limiters map[string]Rate `json:"limiters"`
	At       time.Time       `json:"at"`
}

// RecordOf is the record of pod, if one was written.
func (t *StreamThroughput) RecordOf(pod string) (RecordedThroughput, bool) {
	if t == nil {
		return RecordedThroughput{}, false
	}
	for _, r := range t.Recorded {
		if r.Pod == pod {
			return r, true
		}
	}
	return RecordedThroughput{}, false
}
