#!/usr/bin/env bash
# Release build: static, stamped qhronosd, qhronos and qhronos-bench for each
# target, one qhronos_<version>_<os>_<arch>.tar.gz per target in dist/, and
# dist/checksums.txt (SHA-256, `sha256sum -c` format). Publishes nothing.
#
#   scripts/release.sh                       # every target, version from git
#   VERSION=v1.2.0 scripts/release.sh        # a named release
#   TARGETS=linux/amd64 scripts/release.sh   # one target (what CI builds by default)
#   scripts/release.sh --print-version       # the version it would stamp
#
# Then it runs the host target's binaries' `version` and fails unless they
# print the stamped version and commit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

GO=${GO:-go}
DIST=${DIST:-dist}
TARGETS=${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
DIRTY=""
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then DIRTY="-dirty"; fi
# A tag v1.2.3 on HEAD names the release; otherwise a snapshot names the
# nearest tag (or v0.0.0) and the commit, as Go's pseudo-versions do.
VERSION=${VERSION:-$(git describe --tags --match 'v*' --exact-match 2>/dev/null ||
  echo "$(git describe --tags --match 'v*' --abbrev=0 2>/dev/null || echo v0.0.0)-snapshot+${COMMIT:0:12}${DIRTY}")}
if [ "${1:-}" = "--print-version" ]; then echo "$VERSION"; exit 0; fi
# SOURCE_DATE_EPOCH (reproducible builds) fixes the date; else now.
DATE=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%dT%H:%M:%SZ)

pkg=github.com/qhronos/qhronos/internal/buildinfo
ldflags="-s -w -X ${pkg}.version=${VERSION} -X ${pkg}.commit=${COMMIT} -X ${pkg}.date=${DATE}"
cmds=(./cmd/qhronosd ./cmd/qhronos ./cmd/qhronos-bench)

rm -rf "$DIST"
mkdir -p "$DIST"
echo "release ${VERSION} (commit ${COMMIT:0:12}, ${DATE}) for: ${TARGETS}"
for target in $TARGETS; do
  os=${target%/*} arch=${target#*/}
  name="qhronos_${VERSION}_${os}_${arch}"
  dir="$DIST/$name"
  mkdir -p "$dir"
  t0=$(date +%s)
  # CGO off: SQLite is pure Go (modernc.org/sqlite), zone data is embedded,
  # so every binary is static and cross-compiles without a C toolchain.
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -trimpath -buildvcs=false -ldflags="$ldflags" -o "$dir/" "${cmds[@]}"
  cp README.md config.yaml "$dir/"
  mkdir -p "$dir/docs" && cp docs/*.md "$dir/docs/" # the README links its reference pages
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="$DATE" -C "$DIST" -czf "$DIST/$name.tar.gz" "$name"
  echo "  $name.tar.gz ($(($(date +%s) - t0))s)"
done
(cd "$DIST" && sha256sum ./*.tar.gz | sed 's# \./# #' >checksums.txt)
echo "  checksums.txt"

# The binaries of this machine's platform must say what they are.
host="$("$GO" env GOOS)_$("$GO" env GOARCH)"
dir="$DIST/qhronos_${VERSION}_${host}"
if [ -d "$dir" ]; then
  for bin in qhronosd qhronos qhronos-bench; do
    out=$("$dir/$bin" version)
    echo "  $out"
    case "$out" in
      "$bin $VERSION (commit ${COMMIT:0:12}, built $DATE,"*) ;;
      *) echo "release: $bin version printed \"$out\", want \"$bin $VERSION (commit ${COMMIT:0:12}, built $DATE, …)\"" >&2; exit 1 ;;
    esac
  done
fi
