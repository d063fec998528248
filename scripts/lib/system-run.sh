# Shared by scripts/bench-system and scripts/chaos: builds the executables, starts a throwaway PostgreSQL and
# Redis (services.sh) in a temp directory, runs a Python harness from scripts/lib against them, and stops
# everything it started on exit, failure or Ctrl-C. Only loopback addresses are used.
#
#   countdown_system_run <harness.py> [--debug] [--skip-build] [harness arguments...]
#
# --debug uses the debug build (what scripts/test already built) instead of a release build;
# --skip-build uses whatever build of that configuration exists.

source "$(dirname "${BASH_SOURCE[0]}")/services.sh"

# Kills the processes the harness recorded in $1/pids (one pid and executable path per line) that still run
# that executable.
countdown_kill_recorded() {
  local file=$1/pids pid exe
  [ -f "$file" ] || return 0
  while read -r pid exe; do
    [ -n "$pid" ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$exe" ] && kill -9 "$pid" 2>/dev/null || true
  done <"$file"
}

countdown_system_run() {
  local harness=$1; shift
  local config=release build=1 arg
  for arg in "$@"; do
    case $arg in
      --debug) config=debug ;;
      --skip-build) build=0 ;;
    esac
  done

  countdown_install_deps
  if [ $build -eq 1 ]; then
    log "building ($config)"
    swift build -c "$config" >&2
  fi
  local bin_dir
  bin_dir=$(swift build -c "$config" --show-bin-path)
  for exe in countdown-worker countdown-admin countdown-fake-fcm; do
    [ -x "$bin_dir/$exe" ] || die "$bin_dir/$exe is missing: build first (without --skip-build)"
  done

  COUNTDOWN_SYSTEM_ROOT=$(mktemp -d /tmp/countdown-system.XXXXXX)
  HARNESS_PID=""
  trap countdown_system_cleanup EXIT
  trap 'exit 130' INT TERM

  log "starting PostgreSQL and Redis in $COUNTDOWN_SYSTEM_ROOT"
  countdown_start_postgres "$COUNTDOWN_SYSTEM_ROOT"
  countdown_start_redis "$COUNTDOWN_SYSTEM_ROOT"

  export COUNTDOWN_RUN_ROOT=$COUNTDOWN_SYSTEM_ROOT COUNTDOWN_REPO=$PWD COUNTDOWN_BIN_DIR=$bin_dir \
    COUNTDOWN_PG_PORT COUNTDOWN_PG_BIN COUNTDOWN_PG_USER COUNTDOWN_PG_DATA COUNTDOWN_REDIS_PORT COUNTDOWN_REDIS_PIDFILE
  # In the background so that a TERM or Ctrl-C reaches the trap at once; the harness stops on SIGTERM.
  python3 -u "scripts/lib/$harness" "$@" &
  HARNESS_PID=$!
  local status=0
  wait "$HARNESS_PID" || status=$?
  HARNESS_PID=""
  return $status
}

countdown_system_cleanup() {
  if [ -n "${HARNESS_PID:-}" ] && kill -0 "$HARNESS_PID" 2>/dev/null; then
    kill -TERM "$HARNESS_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$HARNESS_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$HARNESS_PID" 2>/dev/null || true
  fi
  countdown_kill_recorded "$COUNTDOWN_SYSTEM_ROOT"
  countdown_stop_redis
  countdown_stop_postgres
  rm -rf "$COUNTDOWN_SYSTEM_ROOT"
}
