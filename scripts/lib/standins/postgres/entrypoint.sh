#!/bin/sh
# The official image's first start for this stand-in: initdb with POSTGRES_USER and POSTGRES_PASSWORD (scram),
# create POSTGRES_DB, allow host connections; then run postgres as the postgres user.
set -eu
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ "${1:-}" = postgres ]; then
  shift
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?the postgres stand-in needs POSTGRES_PASSWORD}"
    user=${POSTGRES_USER:-postgres}
    db=${POSTGRES_DB:-$user}
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    if [ "$db" != postgres ]; then
      psql -v ON_ERROR_STOP=1 --username="$user" --dbname=postgres -c "CREATE DATABASE \"$db\"" >/dev/null
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "postgres stand-in: initialized $PGDATA (user $user, database $db)"
  fi
  exec postgres -c listen_addresses='*' "$@"
fi
exec "$@"
