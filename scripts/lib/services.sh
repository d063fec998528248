# Shared helpers for scripts/test, scripts/demo and scripts/bench: install what is missing and run
# throwaway PostgreSQL and Redis servers on free loopback ports inside a temp directory we own.
# Never touches servers already running on the machine.

# libfaketime: a worker with a fast clock (CountdownSystem.startWorker(clockOffset:), the chaos scenarios).
# nghttp2-proxy: nghttpx, the TLS and HTTP/2 front of the fake APNs (TestSupport's FakeAPNsProcess).
COUNTDOWN_APT_PACKAGES=(postgresql redis-server libpq-dev libhiredis-dev libssl-dev libmicrohttpd-dev
  libcurl4-openssl-dev pkg-config python3-venv openssl procps pgbouncer nghttp2-server nghttp2-proxy libfaketime)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

countdown_install_deps() {
  countdown_install_packages "${COUNTDOWN_APT_PACKAGES[@]}"
}

# Headless Chromium and its WebDriver, for the console's browser tests (scripts/console-browser-tests).
COUNTDOWN_BROWSER_PACKAGES=(chromium chromium-driver python3-venv)

countdown_install_browser() {
  countdown_install_packages "${COUNTDOWN_BROWSER_PACKAGES[@]}"
}

# Installs (apt) those of the named packages that are missing.
countdown_install_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
}

countdown_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

countdown_pg_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] || die "PostgreSQL server binaries not found under /usr/lib/postgresql"
  echo "$dir"
}

# initdb refuses to run as root; when we are root, run the server as the 'postgres' system user.
countdown_pg_user() {
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    echo postgres
  else
    id -un
  fi
}

countdown_as_pg_user() {
  local user=$1; shift
  if [ "$(id -un)" = "$user" ]; then "$@"; else runuser -u "$user" -- "$@"; fi
}

# Starts PostgreSQL; sets COUNTDOWN_PG_PORT, COUNTDOWN_PG_DATA, DATABASE_URL-style COUNTDOWN_PG_URL.
countdown_start_postgres() {
  local root=$1
  local bin user
  bin=$(countdown_pg_bin)
  user=$(countdown_pg_user)
  COUNTDOWN_PG_BIN=$bin
  COUNTDOWN_PG_USER=$user
  COUNTDOWN_PG_PORT=$(countdown_free_port)
  COUNTDOWN_PG_DATA="$root/pg"
  mkdir -p "$COUNTDOWN_PG_DATA" && chmod 700 "$COUNTDOWN_PG_DATA"
  [ "$user" != "$(id -un)" ] && chown -R "$user" "$COUNTDOWN_PG_DATA" && chmod 755 "$root"
  # COUNTDOWN_PG_LOCALE: the cluster's locale, so its default collation (scripts/bench system measures both).
  local locale=${COUNTDOWN_PG_LOCALE:-C.UTF-8}
  [[ $locale =~ ^[A-Za-z0-9._@-]+$ ]] || die "COUNTDOWN_PG_LOCALE must be a locale name such as C or C.UTF-8, not '$locale'"
  countdown_as_pg_user "$user" "$bin/initdb" -D "$COUNTDOWN_PG_DATA" -U countdown --auth=trust -E UTF8 \
    --locale="$locale" >"$root/initdb.log" 2>&1 || { cat "$root/initdb.log" >&2; die "initdb failed"; }
  countdown_as_pg_user "$user" "$bin/pg_ctl" -D "$COUNTDOWN_PG_DATA" -l "$COUNTDOWN_PG_DATA/server.log" -w -t 60 \
    -o "-p $COUNTDOWN_PG_PORT -k $COUNTDOWN_PG_DATA -c listen_addresses=127.0.0.1 -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >/dev/null || { cat "$COUNTDOWN_PG_DATA/server.log" >&2; die "PostgreSQL did not start"; }
  COUNTDOWN_PG_URL="postgres://countdown@127.0.0.1:$COUNTDOWN_PG_PORT/postgres"
}

countdown_stop_postgres() {
  [ -n "${COUNTDOWN_PG_DATA:-}" ] && [ -f "$COUNTDOWN_PG_DATA/postmaster.pid" ] || return 0
  countdown_as_pg_user "$COUNTDOWN_PG_USER" "$COUNTDOWN_PG_BIN/pg_ctl" -D "$COUNTDOWN_PG_DATA" -m immediate -w stop \
    >/dev/null 2>&1 || true
}

# Starts Redis with AOF; sets COUNTDOWN_REDIS_PORT, COUNTDOWN_REDIS_URL, COUNTDOWN_REDIS_PIDFILE.
countdown_start_redis() {
  local root=$1
  COUNTDOWN_REDIS_PORT=$(countdown_free_port)
  mkdir -p "$root/redis"
  COUNTDOWN_REDIS_PIDFILE="$root/redis/redis.pid"
  redis-server --port "$COUNTDOWN_REDIS_PORT" --bind 127.0.0.1 --dir "$root/redis" --daemonize yes \
    --pidfile "$COUNTDOWN_REDIS_PIDFILE" --logfile "$root/redis/redis.log" --appendonly yes \
    --appendfsync everysec --save '' >/dev/null || die "redis-server did not start"
  for _ in $(seq 1 100); do
    redis-cli -p "$COUNTDOWN_REDIS_PORT" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  redis-cli -p "$COUNTDOWN_REDIS_PORT" ping >/dev/null 2>&1 || die "redis-server is not answering"
  COUNTDOWN_REDIS_URL="redis://127.0.0.1:$COUNTDOWN_REDIS_PORT/0"
}

# Describes the started servers (countdown_start_postgres, countdown_start_redis) to the Swift tests
# (TestSupport's TestEnvironment); $1 is their scratch directory.
countdown_export_test_environment() {
  export COUNTDOWN_TEST_DATABASE_URL="$COUNTDOWN_PG_URL"
  export COUNTDOWN_TEST_REDIS_URL="$COUNTDOWN_REDIS_URL"
  export COUNTDOWN_TEST_PG_BIN="$COUNTDOWN_PG_BIN"
  export COUNTDOWN_TEST_PG_USER="$COUNTDOWN_PG_USER"
  COUNTDOWN_TEST_REDIS_SERVER="$(command -v redis-server)"
  export COUNTDOWN_TEST_REDIS_SERVER
  export COUNTDOWN_TEST_TMPDIR="$1"
}

countdown_stop_redis() {
  [ -n "${COUNTDOWN_REDIS_PORT:-}" ] || return 0
  redis-cli -p "$COUNTDOWN_REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  if [ -f "${COUNTDOWN_REDIS_PIDFILE:-/nonexistent}" ]; then kill "$(cat "$COUNTDOWN_REDIS_PIDFILE")" 2>/dev/null || true; fi
}
