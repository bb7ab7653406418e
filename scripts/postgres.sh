#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL server, for the tests of
# examples/records and pgbus:
#
#   bash scripts/postgres.sh go test -race ./examples/records/...
#
# starts a new cluster in a temporary directory, listening on 127.0.0.1 on
# a free port only, with a database "mcpres"; runs the command with
# MCPRES_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:PORT/mcpres?sslmode=disable
# in its environment; then stops the server and removes the directory,
# whatever the command did, and exits with the command's status. Without a
# command it prints the export lines and keeps the server up until
# interrupted.
#
# The command also gets MCPRES_TEST_POSTGRES_CTL, the path of a script
# that stops and starts that same server, as the user that owns it:
#
#   "$MCPRES_TEST_POSTGRES_CTL" stop    # fast shutdown; returns once it is down
#   "$MCPRES_TEST_POSTGRES_CTL" start   # same port and data; returns once it accepts connections
#
# pgbus's tests use it to restart Postgres under running buses. A restart
# cuts every connection, so run such tests in a command of their own, not
# beside other packages' Postgres tests (go test runs packages at once).
#
# If the PostgreSQL server binaries are missing it installs Debian's
# postgresql package (apt-get; as root, or through sudo). initdb refuses to
# run as root: as root, the cluster runs as the postgres user.
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }

# bindir finds the newest /usr/lib/postgresql/<version>/bin, or the
# directory of initdb on PATH.
bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
    echo "$d"
  elif command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    dirname "$(command -v pg_ctl)"
  fi
}

bin=$(bindir)
if [ -z "$bin" ]; then
  log "installing Debian's postgresql"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  bin=$(bindir)
  [ -n "$bin" ] || { log "no initdb/pg_ctl after installing postgresql"; exit 1; }
fi

# as runs a command as the user that owns the cluster.
as() { "$@"; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/mcpres-postgres.XXXXXX")
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  chown postgres "$dir"
  if command -v runuser >/dev/null; then
    as() { runuser -u postgres -- "$@"; }
  else
    as() { su postgres -s /bin/sh -c "$(printf '%q ' "$@")"; }
  fi
fi

# A port nothing listens on; a moment later it could be taken, and pg_ctl
# then fails to start.
port=""
for p in $(seq 54329 54429); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    port=$p
    break
  fi
done
[ -n "$port" ] || { log "no free port in 54329-54429"; exit 1; }

sleeper=""
stop() {
  [ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null || true
  as "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT
trap 'exit 130' INT TERM

as "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale --no-sync >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }
# pgstart starts the server: loopback TCP only; the socket in the
# temporary directory; no fsync (the data is thrown away).
pgstart() {
  as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null
}
if ! pgstart; then
  cat "$dir/server.log" >&2
  exit 1
fi
as "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres mcpres

# The stop/start script of MCPRES_TEST_POSTGRES_CTL: as and pgstart, with
# this run's values.
ctl="$dir/ctl"
{
  echo '#!/usr/bin/env bash'
  echo '# Stops or starts the server of scripts/postgres.sh: ctl stop|start'
  echo 'set -euo pipefail'
  printf 'bin=%q dir=%q port=%q\n' "$bin" "$dir" "$port"
  declare -f as pgstart
  echo 'case "${1:-}" in'
  echo 'stop) as "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null ;;'
  echo 'start) pgstart ;;'
  echo '*) echo "usage: $0 stop|start" >&2; exit 2 ;;'
  echo 'esac'
} >"$ctl"
chmod 755 "$ctl"
export MCPRES_TEST_POSTGRES_DSN="postgres://postgres@127.0.0.1:$port/mcpres?sslmode=disable"
export MCPRES_TEST_POSTGRES_CTL="$ctl"
log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
if [ $# -eq 0 ]; then
  echo "export MCPRES_TEST_POSTGRES_DSN='$MCPRES_TEST_POSTGRES_DSN'"
  echo "export MCPRES_TEST_POSTGRES_CTL='$MCPRES_TEST_POSTGRES_CTL'"
  log "up until interrupted"
  sleep infinity &
  sleeper=$!
  wait "$sleeper"
  exit 0
fi
status=0
"$@" || status=$?
exit "$status"
