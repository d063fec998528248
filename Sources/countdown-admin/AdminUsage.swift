enum AdminUsage {
    static let summary = """
        usage: countdown-admin <command> [arguments] [--json] [--help]

        commands:
          migrate                         apply the database schema (idempotent, safe to run concurrently)
          cancel <streamId> [--yes]       cancel a stream: status cancelled, jobs removed, reminders cancelled, activities ended
          set-status <streamId> <status>  end a stream as ready, started or expired
          reschedule <streamId> <time>    move a scheduled stream (ISO-8601 with zone, e.g. 2026-12-01T20:00:00+03:00)
          show <streamId>                 the stream, participants, devices, jobs, start ledger, sessions, reminders
          stats                           queue depth, lateness, dead letters, outbox backlog, recent push results
          dead list [--limit N]           dead-lettered jobs with their last error
          dead retry <jobId>|--all        put dead-lettered jobs back on the queue
          dead drop <jobId>               delete a dead-lettered job
          reconcile [--dry-run]           rebuild jobs PostgreSQL implies but Redis lacks; remove stale ones
          seed-demo [--t60-in S]          insert the demo users, devices and streams (replaces earlier demo rows)

        environment: DATABASE_URL, REDIS_URL (not needed by migrate, which prefers MIGRATION_DATABASE_URL), COUNTDOWN_NAMESPACE, START_LEAD_SECONDS, ...
        exit codes: 0 success, 1 runtime failure, 2 usage error
        """

    static let details: [String: String] = [
        "migrate": "usage: countdown-admin migrate [--json]\nApplies missing schema versions in order (through MIGRATION_DATABASE_URL, else DATABASE_URL); prints each one, or that the schema is up to date.",
        "cancel": "usage: countdown-admin cancel <streamId> [--yes] [--json]\nCancels a scheduled stream exactly like POST /live-stream/:id/cancel. Without --yes on a terminal, asks first.",
        "set-status": "usage: countdown-admin set-status <streamId> ready|started|expired [--json]\nEnds the stream's Live Activities with that reason.",
        "reschedule": "usage: countdown-admin reschedule <streamId> <ISO-8601 time with zone> [--json]\nMoves the planned start; jobs follow and running activities get an update push.",
        "show": "usage: countdown-admin show <streamId> [--json]",
        "stats": "usage: countdown-admin stats [--json]",
        "dead": "usage: countdown-admin dead list [--limit N] [--json] | dead retry <jobId>|--all | dead drop <jobId>",
        "reconcile": "usage: countdown-admin reconcile [--dry-run] [--json]\nCompares PostgreSQL with the queue and repairs the difference (with --dry-run: only reports).",
        "seed-demo": "usage: countdown-admin seed-demo [--t60-in SECONDS] [--json]\nInserts demo users, devices and streams relative to the database clock and START_LEAD_SECONDS; the first stream's start window opens after --t60-in seconds (default 8).",
    ]
}
