#!/usr/bin/env bash
# release.sh [-n] [vX.Y.Z]: cuts release vX.Y.Z of every module of the
# repository, in one command (docs/releasing.md says when and why).
#
#  1. Checks, before it changes anything: a clean work tree; vX.Y.Z
#     canonical, above the last release, and tagged for no module;
#     CHANGELOG.md's "## Unreleased" section not empty; api/mcpres.txt
#     the code's (go test ./internal/apilist), and each of its lines that
#     changed since the last release named in that section; before v1, a
#     patch release changes no line of it.
#  2. The release commit: CHANGELOG.md's "## Unreleased" becomes
#     "## vX.Y.Z (date)" under a new empty one; the docs' commands that
#     fetch a module at a version name vX.Y.Z; every nested module
#     requires the others at vX.Y.Z, and go.work maps vX.Y.Z to their
#     directories; the nested go.sum files get the lines of vX.Y.Z, hashed
#     from this very commit through a local proxy (scripts/localproxy.sh).
#     The core's content does not change between the two, since a module
#     zip leaves out its nested modules.
#  3. gorelease (golang.org/x/exp, pinned in scripts/tools) in each module
#     against its last release: the version must suit the changes.
#  4. The tags: vX.Y.Z for the core, DIR/vX.Y.Z for the module at DIR, on
#     the release commit, for every module go.work uses.
#  5. scripts/installcheck.sh vX.Y.Z: every module, fetched from those tags
#     as users will, is tidy, builds, passes its consumer's tests, and
#     installs as the docs say.
#
# It pushes nothing: it prints the push. If a step fails after the
# release commit, the commit and the tags are undone.
#
# -n (dry run) does all of it in a throwaway clone of HEAD, and leaves the
# repository as it was; CI runs it. Without a version, -n takes the next
# one: v0.1.0, the version the nested modules require, if nothing is
# tagged yet; else the next minor if api/mcpres.txt changed since the last
# release, the next patch if not. A dry run with an empty "## Unreleased"
# section warns instead of stopping, so that CI passes right after a
# release.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
modcache=$(go env GOMODCACHE)

dry=
if [ "${1:-}" = -n ]; then dry=1; shift; fi
version=${1:-}
[ -n "$version" ] || [ -n "$dry" ] || { echo "usage: scripts/release.sh [-n] [vX.Y.Z]" >&2; exit 2; }

fail() { echo "release: $*" >&2; exit 1; }
step() { echo "== release: $*"; }

cd "$repo"
[ -z "$(git status --porcelain)" ] || [ -n "$dry" ] || fail "the work tree has changes; commit or stash them"

# The last release: the highest vX.Y.Z tag of the core.
last=$(git tag --list 'v*' | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -1 || true)

# changed_api prints the lines of api/mcpres.txt added (+) or removed (-)
# since the last release.
changed_api() {
  [ -n "$last" ] || return 0
  { diff <(git show "$last:api/mcpres.txt" 2>/dev/null) api/mcpres.txt || true; } | sed -n 's/^< /- /p; s/^> /+ /p'
}

explicit=$version
if [ -z "$version" ]; then
  if [ -z "$last" ]; then
    version=$(awk '$1 == "github.com/mcpres/mcpres" { print $2; exit }' mcpgo/go.mod)
  else
    IFS=. read -r maj min pat <<< "${last#v}"
    if [ -n "$(changed_api)" ]; then version="v$maj.$((min + 1)).0"; else version="v$maj.$min.$((pat + 1))"; fi
  fi
fi

if [ -n "$dry" ]; then
  clone=$(mktemp -d)
  trap 'rm -rf "$clone"' EXIT
  step "dry run of $version in a clone of HEAD ($clone)"
  # A clone has the repository's tags; without its origin it pushes
  # nowhere. A CI machine may have no git identity for the commit.
  git clone --quiet "$repo" "$clone"
  git -C "$clone" checkout --quiet --detach "$(git rev-parse HEAD)"
  git -C "$clone" remote remove origin
  git -C "$clone" config user.name >/dev/null || git -C "$clone" config user.name "release dry run"
  git -C "$clone" config user.email >/dev/null || git -C "$clone" config user.email "dry-run@mcpres.invalid"
  RELEASE_DRY_RUN=1 RELEASE_EXPLICIT=$explicit bash "$clone/scripts/release.sh" "$version"
  exit
fi

# 1. Checks.
step "checks for $version (last release: ${last:-none})"
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "$version is not vMAJOR.MINOR.PATCH"
if [ -n "$last" ] && [ "$(printf '%s\n%s\n' "$last" "$version" | sort -V | tail -1)" != "$version" -o "$last" = "$version" ]; then
  fail "$version is not above the last release, $last"
fi
mapfile -t dirs < <(go work edit -json | sed -n 's/.*"DiskPath": "\(.*\)".*/\1/p' | sed 's#^\./##')
tags=()
for d in "${dirs[@]}"; do
  if [ "$d" = . ]; then t=$version; else t=$d/$version; fi
  [ -z "$(git tag --list "$t")" ] || fail "the tag $t exists"
  tags+=("$t")
done

# The "## Unreleased" section of CHANGELOG.md, without its heading.
unreleased=$(awk '/^## /{ if (on) exit; on = ($0 ~ /^## Unreleased/); next } on' CHANGELOG.md)
if [ -z "$(printf '%s' "$unreleased" | tr -d '[:space:]')" ]; then
  if [ -n "${RELEASE_DRY_RUN:-}" ] && [ -z "${RELEASE_EXPLICIT:-}" ]; then
    echo "release: warning: CHANGELOG.md's \"## Unreleased\" section is empty: a release would stop here"
  else
    fail "CHANGELOG.md has no \"## Unreleased\" section saying what $version changes"
  fi
fi

go test -count=1 ./internal/apilist >/dev/null || fail "api/mcpres.txt is not the code's: go test ./internal/apilist -update"
api=$(changed_api)
if [ -n "$api" ]; then
  IFS=. read -r maj min pat <<< "${version#v}"
  IFS=. read -r lmaj lmin lpat <<< "${last#v}"
  [ "$maj.$min" != "$lmaj.$lmin" ] || fail "$version is a patch release, but the API changed since $last:
$api"
  missing=
  while IFS= read -r line; do
    # pkg P, func Name(…) | method (R) Name(…) | type T struct, Field T | const Name …
    name=$(printf '%s\n' "$line" | sed -E 's/^[-+] pkg [^,]*, //; s/^type [A-Za-z0-9_]+ (struct|interface), ([A-Za-z0-9_]+).*/\2/; s/^method \([^)]*\) ([A-Za-z0-9_]+).*/\1/; s/^(const|var|type|func) ([A-Za-z0-9_]+).*/\2/')
    printf '%s\n' "$unreleased" | grep -qw -- "$name" || missing="$missing
  $line (no \"$name\")"
  done <<< "$api"
  [ -z "$missing" ] || fail "the API changed since $last, and CHANGELOG.md's \"## Unreleased\" section does not name:$missing"
fi

# 2. The release commit. From here on a failure undoes it and the tags.
start=$(git rev-parse HEAD)
undo() {
  echo "release: failed; undoing the release commit and tags" >&2
  for t in "${tags[@]}"; do git tag -d "$t" >/dev/null 2>&1 || true; done
  git reset --quiet --hard "$start"
}
trap undo ERR

step "the release commit"
today=$(date -u +%Y-%m-%d)
awk -v v="$version" -v d="$today" '!done && /^## Unreleased/ { print; print ""; print "## " v " (" d ")"; done = 1; next } { print }' CHANGELOG.md > CHANGELOG.md.new
mv CHANGELOG.md.new CHANGELOG.md
for d in "${dirs[@]}"; do
  [ "$d" != . ] || continue
  for p in $(cd "$d" && go mod edit -json | sed -n 's/.*"Path": "\(github\.com\/mcpres\/mcpres[^"]*\)".*/\1/p' | sort -u); do
    [ "$p" != "$(awk '$1 == "module" { gsub(/"/, "", $2); print $2 }' "$d/go.mod")" ] || continue
    (cd "$d" && go mod edit -require="$p@$version")
  done
done
# go.work maps the new version of each module some module requires to its
# directory, in place of the old.
for old in $(go work edit -print | grep -oE 'github\.com/mcpres/mcpres[^ ]* v[^ ]+ =>' | awk '{ print $1 "@" $2 }'); do
  go work edit -dropreplace="$old"
done
required=$(cat */go.mod */*/go.mod 2>/dev/null | awk '$1 ~ /^github\.com\/mcpres\/mcpres/ && $2 ~ /^v/ { print $1 }' | sort -u)
for d in "${dirs[@]}"; do
  p=$(awk '$1 == "module" { gsub(/"/, "", $2); print $2 }' "$d/go.mod")
  if printf '%s\n' "$required" | grep -qx "$p"; then go work edit -replace="$p@$version=./${d#.}"; fi
done
# The published commands of the docs and package docs name the new version.
for f in $(git ls-files '*.md' 'doc.go' '*/doc.go' | grep -v '^CHANGELOG.md$'); do
  sed -i -E "s#(github\.com/mcpres/mcpres[^ @\`]*)@v[0-9]+\.[0-9]+\.[0-9]+#\1@$version#g" "$f"
done
git commit --quiet -am "release $version: CHANGELOG.md dated; the nested modules, and the docs' go get commands, name $version"

# The nested go.sum files: a module's lines hash the zips of those it
# requires, which hold their own go.sum files, so the lines settle from
# the core outwards, a round for each level; a fresh proxy each round,
# and a module cache rid of the last round's modules of mcpres, so that no
# zip of an earlier round is hashed. A would-be version never enters the
# machine's module cache.
proxy=$(mktemp -d)
freshcache=$(mktemp -d)
trap 'chmod -R u+w "$freshcache" 2>/dev/null; rm -rf "$proxy" "$freshcache"' EXIT
export GOPROXY="file://$proxy,file://$modcache/cache/download,https://proxy.golang.org"
export GOMODCACHE=$freshcache GONOSUMDB='github.com/mcpres/*'
for round in 1 2 3 4 5; do
  chmod -R u+w "$freshcache"
  rm -rf "$proxy" "$freshcache/github.com/mcpres" "$freshcache/cache/download/github.com/mcpres"
  bash scripts/localproxy.sh -version "$version" "$proxy"
  for d in "${dirs[@]}"; do
    [ "$d" != . ] || continue
    # Hashed anew from this round's zips.
    sed -i "/^github\.com\/mcpres\/mcpres[^ ]* $version[ /]/d" "$d/go.sum"
    (cd "$d" && GOWORK=off GOFLAGS=-mod=mod go mod tidy)
  done
  if git diff --quiet; then break; fi
  [ "$round" -lt 5 ] || fail "the go.sum files do not settle"
  git commit --quiet --amend -a --no-edit
done

# 3. gorelease, each module against its last release.
step "gorelease"
tools=$(mktemp -d)
(cd scripts/tools && GOWORK=off go build -o "$tools/" golang.org/x/exp/cmd/gorelease)
for d in "${dirs[@]}"; do
  if [ "$d" = . ]; then prefix=; else prefix=$d/; fi
  base=$(git tag --list "${prefix}v*" | sed "s#^$prefix##" | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -1 || true)
  echo "-- ${d}: gorelease -base=${base:-none} -version=$version"
  # gorelease refuses a version the proxy already has: this module's
  # would-be version is left out of a copy of the proxy (the others'
  # stay, for its requires) and of the module cache.
  p=$(awk '$1 == "module" { gsub(/"/, "", $2); print $2 }' "$d/go.mod")
  gp=$(mktemp -d)
  cp -r "$proxy/." "$gp/"
  rm -f "$gp/$p/@v/$version".*
  sed -i "/^$version\$/d" "$gp/$p/@v/list"
  chmod -R u+w "$freshcache"
  rm -rf "$freshcache/cache/download/$p/@v/$version".* "$freshcache/$p@$version"
  (cd "$d" && GOPROXY="file://$gp,file://$modcache/cache/download,https://proxy.golang.org" GOWORK=off GOFLAGS=-mod=mod "$tools/gorelease" -base="${base:-none}" -version="$version")
  rm -rf "$gp"
done
rm -rf "$tools"

# 4. The tags.
step "tags: ${tags[*]}"
for t in "${tags[@]}"; do git tag -a -m "mcpres $version" "$t"; done

# 5. Installed as users will.
step "installcheck $version"
GOMODCACHE=$modcache bash scripts/installcheck.sh "$version"

trap - ERR
if [ -n "${RELEASE_DRY_RUN:-}" ]; then
  step "dry run done: a release would push $(git rev-parse --short HEAD) and ${tags[*]}"
else
  step "done. Push the commit and the tags together:"
  echo "git push origin HEAD ${tags[*]}"
fi
