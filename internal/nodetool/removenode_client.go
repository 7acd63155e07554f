package nodetool

import "context"

// RemoveNode runs `nodetool removenode <hostID>` on pod, the coordinator, and classifies
// the answer. It blocks until the removed node's ranges are re-streamed from the
// surviving replicas (or ctx ends). Only a refusal proves anything by itself: whether a
// removal runs is read after (RemovalStatus on the coordinator, the ring).
func (c Client) RemoveNode(ctx context.Context, pod, hostID string) (RemoveOutcome, string) {
	out, errOut, err := c.run(ctx, pod, "removenode", hostID)
	return ClassifyRemoveNode(out, errOut, err)
}

// RemovalStatus reads `nodetool removenode status` on pod: the removal it coordinates,
// if any (the state lives on the coordinator only).
func (c Client) RemovalStatus(ctx context.Context, pod string) (RemovalStatus, error) {
	out, errOut, err := c.read(ctx, pod, "removenode", "status")
	if err != nil {
		return RemovalStatus{}, execFailure(pod, "removenode status", out, errOut, err)
	}
	return ParseRemovalStatus(out)
}
