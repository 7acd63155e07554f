#!/usr/bin/env bash
# update-krew-manifest.sh - rewrite spec.version, every platform's uri and sha256, and the
# version in the caveats' store path of krew-manifest.yaml from the archives in dist/.
#
# Usage: hack/release/update-krew-manifest.sh [--dist DIR] [--manifest FILE] [-o OUT]
#                                             [--base-url URL] [--partial]
#   --dist DIR       where checksums.txt and the archives are (default: <repo>/dist)
#   --manifest FILE  manifest to read (default: <repo>/krew-manifest.yaml)
#   -o OUT           where to write (default: in place, over --manifest)
#   --base-url URL   download location of the archives (default: the GitHub release of
#                    the version, https://github.com/kubectl-cassandra/kubectl-cassandra/
#                    releases/download/<version>); tests point it at a local server
#   --partial        keep the sha256 of platforms that dist/ has no archive for (used
#                    by tests that build only linux/amd64); default: fail
#
# The version is taken from the archive names in checksums.txt
# (kubectl-cassandra_<version>_<os>_<arch>.<ext>), so the manifest follows whatever
# `make release-snapshot` (or goreleaser) built. The real sha256 of a release is only
# known once goreleaser has built its archives: run this on goreleaser's dist/ (or let
# krew-release-bot compute them) before submitting to krew-index.
#
# The rewrite is line-based and expects the layout of the committed manifest: one
# `uri:` line followed (before the next platform) by one `sha256:` line per platform.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIST="$ROOT/dist"
MANIFEST="$ROOT/krew-manifest.yaml"
OUT=""
BASE_URL=""
PARTIAL=0
REPO_URL=https://github.com/kubectl-cassandra/kubectl-cassandra

die() { echo "update-krew-manifest.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --dist) DIST="${2:?--dist needs a directory}"; shift 2 ;;
    --manifest) MANIFEST="${2:?--manifest needs a file}"; shift 2 ;;
    -o) OUT="${2:?-o needs a file}"; shift 2 ;;
    --base-url) BASE_URL="${2:?--base-url needs a URL}"; shift 2 ;;
    --partial) PARTIAL=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
OUT="${OUT:-$MANIFEST}"

SUMS="$DIST/checksums.txt"
[ -f "$SUMS" ] || die "$SUMS not found; run 'make release-snapshot' (or goreleaser) first"
[ -f "$MANIFEST" ] || die "$MANIFEST not found"

# One version across all archives, read from their names.
versions="$(awk '{print $2}' "$SUMS" | sed -nE 's/^kubectl-cassandra_(v[^_]+)_[a-z0-9]+_[a-z0-9]+\.(tar\.gz|zip)$/\1/p' | sort -u)"
[ -n "$versions" ] || die "no kubectl-cassandra_<version>_<os>_<arch> archive listed in $SUMS"
[ "$(printf '%s\n' "$versions" | wc -l)" -eq 1 ] || die "archives of several versions in $SUMS: $(printf '%s\n' "$versions" | paste -sd " " -)"
VERSION="$versions"
BASE_URL="${BASE_URL:-$REPO_URL/releases/download/$VERSION}"

# Check the listed archives are the ones in dist/ (a stale checksums.txt would put
# wrong hashes into the manifest).
(cd "$DIST" && sha256sum --quiet -c checksums.txt) >&2 || die "$SUMS does not match the archives in $DIST"

tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
awk -v version="$VERSION" -v base="${BASE_URL%/}" -v partial="$PARTIAL" -v sums="$SUMS" '
  function fail(msg) { print "update-krew-manifest.sh: " msg > "/dev/stderr"; failed = 1; exit 1 }
  BEGIN {
    while ((getline line < sums) > 0) { split(line, f, /[ \t*]+/); sha[f[2]] = f[1] }
    close(sums)
  }
  # spec.version (two-space indent: the key directly under spec:)
  /^  version:[ \t]/ { sub(/version:.*/, "version: " version); print; nver++; next }
  # The caveats tell users where the completion shim is: store/cassandra/<version>/.
  /store\/cassandra\/v[^\/]*\// { gsub(/store\/cassandra\/v[^\/]*\//, "store/cassandra/" version "/") }
  /^[ \t]+uri:[ \t]/ {
    if (pending != "") fail("platform with uri " pending " has no sha256 line")
    uri = $2
    n = split(uri, parts, "/"); file = parts[n]
    if (!match(file, /_(linux|darwin|windows)_[a-z0-9]+\.(tar\.gz|zip)$/))
      fail("cannot read os/arch from uri " uri)
    file = "kubectl-cassandra_" version substr(file, RSTART)
    indent = $0; sub(/uri:.*/, "", indent)
    print indent "uri: " base "/" file
    pending = file; nuri++
    next
  }
  /^[ \t]+sha256:[ \t]/ {
    if (pending == "") fail("sha256 line without a uri line before it")
    if (pending in sha) {
      indent = $0; sub(/sha256:.*/, "", indent)
      print indent "sha256: " sha[pending]; used[pending] = 1; nsha++
    } else if (partial) {
      print "update-krew-manifest.sh: no archive " pending " in dist; sha256 left unchanged (--partial)" > "/dev/stderr"
      print
    } else {
      fail("no archive " pending " in " sums " (build all platforms, or pass --partial)")
    }
    pending = ""
    next
  }
  { print }
  END {
    if (failed) exit 1
    if (pending != "") fail("platform with uri " pending " has no sha256 line")
    if (nver != 1) fail("expected exactly one spec.version line, found " nver+0)
    if (nuri == 0) fail("no platform uri found")
    if (nsha == 0) fail("no platform matched any archive in " sums)
    for (name in sha) if (!(name in used)) fail("archive " name " is in " sums " but no platform of the manifest uses it")
  }
' "$MANIFEST" >"$tmp" || die "manifest not rewritten"
cat "$tmp" >"$OUT"
echo "update-krew-manifest.sh: $OUT now describes $VERSION ($(grep -c '^[[:space:]]*sha256:' "$OUT") platforms)" >&2
