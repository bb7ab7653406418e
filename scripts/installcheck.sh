#!/usr/bin/env bash
# installcheck.sh [-tidy] vX.Y.Z: proves, without publishing anything, that every
# module of the repository can be fetched at vX.Y.Z and used as a user
# will, from a module proxy made of the repository's tags and, for a module
# not yet tagged vX.Y.Z, of HEAD as if it were (scripts/localproxy.sh).
#
#  1. Each nested module is tidy outside the workspace (GOWORK=off), its
#     requires of the others resolved through that proxy. Where the core's
#     version is not tagged yet, its go.sum may lack the lines for the
#     would-be versions, whose hashes change with every commit; the release
#     commit adds them (scripts/release.sh).
#  2. An empty module outside the repository runs `go get` for the core and
#     each library module at vX.Y.Z; its main.go is the README's server,
#     its tests (scripts/testdata/consumer) use each module as docs/ shows.
#     go vet and go test pass there.
#  3. Every `go install` or `go get` of a github.com/mcpres/mcpres path at a
#     version (or @latest) that README.md, docs/ or an example's README
#     gives runs as written; the mcpaudit it installs audits the README's
#     server, as docs/auditing.md's CI job does.
#
# With -tidy, only the first. The module cache is a fresh one, so that a would-be version never enters
# the machine's own; modules from elsewhere come from that cache's
# downloads, or else from proxy.golang.org.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
tidy_only=
if [ "${1:-}" = -tidy ]; then tidy_only=1; shift; fi
version=${1:?usage: scripts/installcheck.sh [-tidy] vX.Y.Z}

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
bash scripts/localproxy.sh -version "$version" "$work/proxy"

# The nested modules, as go.work lists them.
nested=$(go work edit -json | sed -n 's/.*"DiskPath": "\.\/\(.*\)".*/\1/p')

export GOPROXY="file://$work/proxy,file://$(go env GOMODCACHE)/cache/download,https://proxy.golang.org"
export GOMODCACHE=$work/modcache
export GOWORK=off GOFLAGS=-mod=mod GONOSUMDB='github.com/mcpres/*' GOBIN=$work/bin


echo "-- tidy outside the workspace, through the local proxy"
core_tagged=$(git tag --list "$version")
for m in $nested; do
  if out=$(cd "$m" && go mod tidy -diff 2>&1); then
    continue
  fi
  # What tidy would change but the would-be lines of go.sum.
  rest=$(printf '%s\n' "$out" | grep '^[-+]' | grep -v '^+++ \|^--- ' |
    grep -v "^+github\.com/mcpres/mcpres[a-z/]* $version\(/go\.mod\)\? h1:" || true)
  if [ -n "$core_tagged" ] || [ -n "$rest" ]; then
    echo "$m: go mod tidy -diff (GOWORK=off, through the local proxy):"
    printf '%s\n' "$out"
    exit 1
  fi
  echo "$m: tidy but for the go.sum lines of $version, not tagged yet"
done

[ -z "$tidy_only" ] || exit 0

echo "-- go get every library module at $version in an empty module"
consumer=$work/consumer
mkdir -p "$consumer"
cp scripts/testdata/consumer/*.go "$consumer/"
# The README's server, as a reader copies it into main.go.
awk '/^```go$/ { inblock = 1; text = ""; next }
     /^```$/ && inblock { if (text ~ /^package main/) { printf "%s", text; exit } inblock = 0; next }
     inblock { text = text $0 "\n" }' README.md > "$consumer/main.go"
[ -s "$consumer/main.go" ] || { echo "README.md has no package main snippet"; exit 1; }
libs=""
for m in "" $nested; do
  case $m in bench|examples/*) continue ;; esac
  libs="$libs github.com/mcpres/mcpres${m:+/$m}@$version"
done
(
  cd "$consumer"
  go mod init example.com/consumer >/dev/null 2>&1
  # shellcheck disable=SC2086
  go get $libs
  go mod tidy
  # Every module of mcpres came from the local proxy, at $version.
  go list -m all | awk -v v="$version" '$1 ~ /^github\.com\/mcpres\// && $2 != v { print "not at " v ": " $0; bad = 1 } END { exit bad }'
  go vet ./...
  go test -count=1 ./...
)

echo "-- every go install and go get of a published path that the docs give"
pages=$(git ls-files 'README.md' '*/README.md' 'docs/*.md')
cmds=$(grep -ho 'go \(install\|get\) github\.com/mcpres/mcpres[^ `]*@[^ `]*' $pages | sort -u)
[ -n "$cmds" ] || { echo "no published go install or go get in the docs"; exit 1; }
while IFS= read -r cmd; do
  # Each at the version being checked; @latest too, which the local proxy
  # resolves to it when it is the newest.
  echo "$cmd"
  (cd "$consumer" && ${cmd})
done <<< "$cmds"
go version -m "$GOBIN"/* | awk -v v="$version" '$1 == "mod" && $2 ~ /^github\.com\/mcpres\// && $3 != v { print "installed " $2 " " $3 ", not " v; bad = 1 } END { exit bad }'

echo "-- the installed mcpaudit audits the README's server (docs/auditing.md, In CI)"
(cd "$consumer" && go build -o server . && "$GOBIN/mcpaudit" -protocol all -- ./server)
echo "installcheck: every module installs and works at $version"
