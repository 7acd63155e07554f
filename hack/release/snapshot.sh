#!/usr/bin/env bash
# snapshot.sh - build the release archives that goreleaser would publish, with plain
# `go build`, tar and zip, so that they can be checked offline (goreleaser itself is a
# large build; see hack/make/release.mk).
#
# Output, in $DIST (default: dist/ at the repo root):
#   kubectl-cassandra_<version>_<os>_<arch>.tar.gz   (linux, darwin)
#   kubectl-cassandra_<version>_windows_<arch>.zip
#   checksums.txt                                    (sha256sum format, as goreleaser)
# Each archive holds, at its root and in this order (goreleaser's: the extra files, then
# the binary): LICENSE, README.md, kubectl_complete-cassandra, the man pages
# man/kubectl-cassandra*.1 (hack/docs, dated by the commit), and kubectl-cassandra
# (kubectl-cassandra.exe on windows).
#
# Keep in step with .goreleaser.yaml: same -trimpath, CGO_ENABLED=0, ldflags, names and
# file list. The archives are not byte-identical to goreleaser's (different tar/zip
# writers), which is why update-krew-manifest.sh must be re-run on the real release.
#
# Env knobs:
#   RELEASE_VERSION  v-prefixed version (default: spec.version of krew-manifest.yaml)
#   PLATFORMS        space-separated os/arch list (default: the 6 release platforms)
#   DIST             output directory (default: <repo>/dist)
#
# The archives are reproducible for a given commit and toolchain: the commit time is
# used as the build date and as every file's mtime, owners are 0/0, gzip stores no
# name or time, zip stores no extra attributes.
set -euo pipefail

export PATH="$PATH:/usr/local/go/bin"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

die() { echo "snapshot.sh: $*" >&2; exit 1; }

PROJECT=kubectl-cassandra
VPKG=github.com/kubectl-cassandra/kubectl-cassandra/internal/version
DIST="${DIST:-$ROOT/dist}"
PLATFORMS="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"
# The files every archive carries next to the binary (.goreleaser.yaml archives[].files).
FILES=(LICENSE README.md kubectl_complete-cassandra)

for f in "${FILES[@]}"; do
  [ -f "$f" ] || die "$f is missing at the repo root ($ROOT); every release archive must contain it (goreleaser archives[].files, and Krew requires LICENSE). Create it first."
done
[ -x kubectl_complete-cassandra ] || die "kubectl_complete-cassandra is not executable; run: chmod +x kubectl_complete-cassandra"

if [ -z "${RELEASE_VERSION:-}" ]; then
  RELEASE_VERSION="$(awk '$1 == "version:" && /^  version:/ {print $2; exit}' krew-manifest.yaml)"
fi
[[ "$RELEASE_VERSION" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$ ]] ||
  die "version '$RELEASE_VERSION' is not a v-prefixed semver (e.g. v0.1.0); set RELEASE_VERSION"

# goreleaser's .Commit is the full hash and mod_timestamp is the commit time; do the same.
COMMIT="$(git rev-parse HEAD 2>/dev/null || echo none)"
EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
DATE="$(date -u -d "@$EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
LDFLAGS="-s -w -X $VPKG.Version=$RELEASE_VERSION -X $VPKG.Commit=$COMMIT -X $VPKG.Date=$DATE"

mkdir -p "$DIST"
DIST="$(cd "$DIST" && pwd)"
# Remove only what this script writes, so DIST may point at a shared directory.
rm -rf "$DIST/checksums.txt" "$DIST/$PROJECT"_*
# The man pages, as goreleaser's before hook writes them; listed in .goreleaser.yaml's
# order (sorted by name).
MAN="$DIST/${PROJECT}_man"
rm -rf "$MAN"
SOURCE_DATE_EPOCH="$EPOCH" go run ./hack/docs -man "$MAN/man"
MANPAGES=()
while IFS= read -r f; do MANPAGES+=("man/$f"); done < <(cd "$MAN/man" && LC_ALL=C ls)

archives=()
for platform in $PLATFORMS; do
  os="${platform%/*}" arch="${platform#*/}"
  case "$os" in windows) bin="$PROJECT.exe" ext=zip ;; *) bin="$PROJECT" ext=tar.gz ;; esac
  name="${PROJECT}_${RELEASE_VERSION}_${os}_${arch}"
  stage="$DIST/${PROJECT}_${os}_${arch}"
  echo "snapshot.sh: building $name.$ext" >&2
  mkdir -p "$stage"
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" \
    go build -trimpath -ldflags "$LDFLAGS" -o "$stage/$bin" ./cmd/kubectl-cassandra
  install -m 0644 LICENSE README.md "$stage/"
  install -m 0755 kubectl_complete-cassandra "$stage/"
  install -d -m 0755 "$stage/man"
  install -m 0644 "$MAN"/man/*.1 "$stage/man/"
  chmod 0755 "$stage/$bin"
  members=("${FILES[@]}" "${MANPAGES[@]}" "$bin")
  touch -d "@$EPOCH" "${members[@]/#/$stage/}"
  case "$ext" in
    tar.gz)
      tar -C "$stage" --owner=0 --group=0 --numeric-owner --mtime="@$EPOCH" --format=gnu \
        -cf - "${members[@]}" | gzip -n -9 >"$DIST/$name.$ext"
      ;;
    zip)
      # TZ=UTC: zip stores local DOS times, so the archive bytes would depend on the zone.
      (cd "$stage" && TZ=UTC zip -q -X -D "$DIST/$name.$ext" "${members[@]}")
      ;;
  esac
  archives+=("$name.$ext")
done

(cd "$DIST" && sha256sum "${archives[@]}" | LC_ALL=C sort -k2 >checksums.txt)
echo "snapshot.sh: wrote ${#archives[@]} archive(s) and checksums.txt to $DIST" >&2
