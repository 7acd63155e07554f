package operator

import (
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// APIVersion is the API version an adapter reads its resource with: found by discovery
// (Found), or assumed without asking (Assume: kubectl pays a discovery round trip
// before its first read, an adapter that knows its resource need not) until a read
// answered NotFound says to ask discovery after all (Forget). It is safe for concurrent
// use: a run's waits read the resource from several goroutines.
type APIVersion struct {
	// Version is the version in use ("" until found or assumed); set it directly only
	// before the adapter is shared.
	Version string
	mu      sync.Mutex
	assumed bool
}

// Get is the version in use ("" until found or assumed).
func (v *APIVersion) Get() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.Version
}

// Found records version as served, found by discovery.
func (v *APIVersion) Found(version string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.Version, v.assumed = version, false
}

// Assume uses version, unless one is in use already, without asking discovery.
func (v *APIVersion) Assume(version string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.Version == "" {
		v.Version, v.assumed = version, true
	}
}

// Served records that the server answered a read made with the version in use: it is
// served, never to be asked of discovery again.
func (v *APIVersion) Served() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.assumed = false
}

// Forget drops an assumed version when err, a read's error, is NotFound (the server
// may not serve that version): it returns the version dropped and true, the caller then
// asks discovery. Otherwise nothing changes and it returns "", false.
func (v *APIVersion) Forget(err error) (was string, forgot bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.assumed || !apierrors.IsNotFound(err) {
		return "", false
	}
	was = v.Version
	v.Version, v.assumed = "", false
	return was, true
}
