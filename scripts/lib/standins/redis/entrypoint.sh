#!/bin/sh
# As the official image: redis-server runs as redis in /data, without protected mode.
set -eu
if [ "${1:-}" = redis-server ] && [ "$(id -u)" = 0 ]; then
  chown -R redis:redis /data
  exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
fi
if [ "${1:-}" = redis-server ]; then
  shift
  exec redis-server --protected-mode no "$@"
fi
exec "$@"
