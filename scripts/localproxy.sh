#!/usr/bin/env bash
# localproxy.sh [-version vX.Y.Z] DIR: writes a Go module proxy into DIR,
# for GOPROXY=file://DIR, holding every module go.work uses at each version
# the repository's tags give it, and at vX.Y.Z, made from HEAD, for each
# module not yet tagged with it (scripts/tools/localproxy says how). The
# modules are then fetched as users will fetch them, before anything is
# published.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
version=
if [ "${1:-}" = -version ]; then version=$2; shift 2; fi
out=${1:?usage: scripts/localproxy.sh [-version vX.Y.Z] DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The tools module is no part of the workspace, and is never released.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$repo/scripts/tools" && GOWORK=off go build -o "$bin/localproxy" ./localproxy)
"$bin/localproxy" -repo "$repo" -out "$out" ${version:+-version "$version"}
