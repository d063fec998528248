// Postgres: work in progress.
