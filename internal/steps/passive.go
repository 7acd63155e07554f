package steps

// Steps whose Do does nothing: they wait for what the step before set off, so the engine
// has no action to fence for them (internal/engine: Passive).

// Passive marks WaitPodGone as acting on nothing.
func (s *WaitPodGone) Passive() {}

// Passive marks VerifyLeft as acting on nothing.
func (s *VerifyLeft) Passive() {}

// Passive marks WaitRestarted as acting on nothing.
func (s *WaitRestarted) Passive() {}

// Passive marks WaitJoined as acting on nothing.
func (s *WaitJoined) Passive() {}
