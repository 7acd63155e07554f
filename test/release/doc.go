// Package release holds the checks of the release artefacts: LICENSE, the Krew manifest
// (krew-manifest.yaml), the goreleaser configuration (.goreleaser.yaml), the archives built
// by hack/release/snapshot.sh and the completion shim.
//
// The checks run krew's own tools (validate-krew-manifest, krew install), built from the
// Go module proxy by hack/release/tool.sh into ~/.cache/kubectl-cassandra-tools; nothing is
// added to go.mod. With -short, only the archive of the host platform is built.
//
// Set KCASS_RELEASE_DIST=<goreleaser's dist/> to run the archive and install checks on the
// archives goreleaser built instead of snapshot.sh's.
//
// Set KCASS_REQUIRE_TOOLS=1 (CI does) to turn "tool cannot be built" skips into failures.
package release
