// Package version holds the build identity of the plugin, set at link time.
package version

import "runtime"

// Set with -ldflags "-X github.com/kubectl-cassandra/kubectl-cassandra/internal/version.Version=v0.1.0 ...".
var (
	Version = "v0.0.0-dev"
	Commit  = "none"
	Date    = "unknown"
)

// Info is the build identity as printed by `kubectl cassandra version`.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the build identity of this binary.
func Get() Info {
	return Info{Version: Version, Commit: Commit, Date: Date, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
}
