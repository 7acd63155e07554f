# release.mk - release archives, Krew manifest and goreleaser checks (included by the Makefile).
#
# Tools (krew, validate-krew-manifest, goreleaser) are built from the Go module proxy by
# hack/release/tool.sh into ~/.cache/kubectl-cassandra-tools/<name>-<version>/, never
# through our go.mod.

RELEASE_TOOL := hack/release/tool.sh

.PHONY: release-snapshot krew-manifest krew-validate goreleaser-check release-test

## release-snapshot: build the 6 release archives + checksums.txt into dist/ (no goreleaser)
release-snapshot:
	hack/release/snapshot.sh

## krew-manifest: rewrite krew-manifest.yaml's version/uri/sha256 from dist/
krew-manifest:
	hack/release/update-krew-manifest.sh

## krew-validate: check krew-manifest.yaml with krew's own validator (structure only, offline)
# The validator takes the plugin name from the file name, as krew-index stores
# plugins/<name>.yaml, so it checks a copy named cassandra.yaml.
krew-validate:
	@bin=$$($(RELEASE_TOOL) validate-krew-manifest) && tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  cp krew-manifest.yaml "$$tmp/cassandra.yaml" && "$$bin" -manifest "$$tmp/cassandra.yaml" -skip-install

## goreleaser-check: build goreleaser (slow the first time: see hack/release/README.md) and run `goreleaser check`
goreleaser-check:
	@bin=$$($(RELEASE_TOOL) goreleaser) && "$$bin" check --config .goreleaser.yaml

## release-test: the release checks of test/release (full: all 6 archives, krew install of every platform)
release-test:
	go test -count=1 -v ./test/release/...
