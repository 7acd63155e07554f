#!/usr/bin/env bash
# tool.sh NAME - build (once, then cached) a release tool from the Go module proxy and
# print the absolute path of its binary on stdout.
#
# The tools are installed with `GOBIN=<cache> go install module/cmd@version` from a
# scratch directory, so they never enter our go.mod/go.sum and their dependency graphs
# (krew pins an old client-go, goreleaser pulls hundreds of modules) stay separate.
# Binaries land in ${KCASS_TOOLS_CACHE:-~/.cache/kubectl-cassandra-tools}/<name>-<version>/;
# a second call with the same version only checks that the file exists.
#
# NAME is one of:
#   krew                    sigs.k8s.io/krew/cmd/krew                    (KREW_VERSION)
#   validate-krew-manifest  sigs.k8s.io/krew/cmd/validate-krew-manifest  (KREW_VERSION)
#   goreleaser              github.com/goreleaser/goreleaser/v2         (GORELEASER_VERSION)
#
# Versions: krew v0.4.3 is the only krew release the module proxy serves (v0.4.4+ were
# tagged without being fetchable as modules). goreleaser v2.17.0 is the newest release
# whose go directive (1.26.4) this toolchain (1.26.x, GOTOOLCHAIN=local) accepts;
# v2.18.x needs go 1.27.
set -euo pipefail

export PATH="$PATH:/usr/local/go/bin"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0

KREW_VERSION="${KREW_VERSION:-v0.4.3}"
GORELEASER_VERSION="${GORELEASER_VERSION:-v2.17.0}"
CACHE="${KCASS_TOOLS_CACHE:-$HOME/.cache/kubectl-cassandra-tools}"

name="${1:?usage: $0 krew|validate-krew-manifest|goreleaser}"
case "$name" in
  krew) pkg="sigs.k8s.io/krew/cmd/krew"; version="$KREW_VERSION" ;;
  validate-krew-manifest) pkg="sigs.k8s.io/krew/cmd/validate-krew-manifest"; version="$KREW_VERSION" ;;
  goreleaser) pkg="github.com/goreleaser/goreleaser/v2"; version="$GORELEASER_VERSION" ;;
  *) echo "tool.sh: unknown tool '$name' (want krew, validate-krew-manifest or goreleaser)" >&2; exit 2 ;;
esac

dir="$CACHE/$name-$version"
bin="$dir/$name"
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  # Scratch space on the cache's file system, so the final mv is an atomic rename even
  # when two test runs build the same tool at once.
  scratch="$(mktemp -d "$CACHE/.build.XXXXXX")"
  trap 'rm -rf "$scratch"' EXIT
  start=$(date +%s)
  echo "tool.sh: building $pkg@$version into $dir (first run only)" >&2
  # Outside any module, `go install pkg@version` resolves with the tool's own go.mod.
  # Build into a temp GOBIN first and move the binary, so an interrupted build never
  # leaves a half-written file that the cache check above would accept.
  (cd "$scratch" && GOBIN="$scratch/bin" go install -trimpath "$pkg@$version")
  mv "$scratch/bin/$name" "$bin"
  echo "tool.sh: built $name $version in $(( $(date +%s) - start ))s" >&2
fi
printf '%s\n' "$bin"
