package replacenode

// Options are a replace's own part of the request (pkg/operation.Request.Ext), bound
// by its command's flags.
type Options struct {
	// Pod is the pod whose dead node is replaced (--pod); Address, when set, is the dead
	// node's address (--address: the ring has several candidates); AllowSeed lets a
	// seed's node be replaced (--allow-seed).
	Pod, Address string
	AllowSeed    bool
}
