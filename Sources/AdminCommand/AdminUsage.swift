enum AdminUsage {
    /// Every command that goes through `Confirmation` (asks on a terminal, needs `--yes` elsewhere).
    static let confirmedCommands = ["cancel", "set-status", "reschedule", "pause", "dead drop", "tokens restore", "quarantine drop", "retention"]

    static let summary = """
        usage: countdown-admin <command> [arguments] [--json] [--help] [--actor NAME]

        commands:
          migrate [--status]              apply the database schema (idempotent, safe to run concurrently); --status lists versions
          cancel <streamId> [--yes]       cancel a stream: status cancelled, jobs removed, reminders cancelled, activities ended
          set-status <streamId> <status>  end a stream as ready, started or expired (asks; --yes)
          reschedule <streamId> <time>    move a scheduled stream (ISO-8601 with zone, e.g. 2026-12-01T20:00:00+03:00) [--yes]
          show <streamId>                 the stream, participants, devices, jobs, start ledger, sessions, reminders
          stats                           queue depth, lateness, dead letters, outbox backlog, recent push results
          dead list [--limit N]           dead-lettered jobs with their last error
          dead retry <jobId>|--all        put dead-lettered jobs back on the queue
          dead drop <jobId> [--yes]       delete a dead-lettered job
          reconcile [--dry-run]           rebuild jobs PostgreSQL implies but Redis lacks; remove stale ones
          seed-demo [--t60-in S]          insert the demo users, devices and streams (replaces earlier demo rows; --force on a non-demo database)
          tokens list [--since T]         tokens the worker cleared (T: RFC 3339 time or 90s, 15m, 2h ago; default 24h)
          tokens restore --since T        put cleared tokens back where the device has no newer one [--reason R] [--yes]
          pause [--kind K]... [--reason]  stop claiming jobs of these kinds (all without --kind), fleet-wide; jobs stay due [--yes]
          resume [--kind K]...            claim them again
          quarantine list                 rows the worker could not read or plan, with the reason
          quarantine retry <key>…|--all   plan quarantined streams again (those that now read and plan leave the quarantine)
          quarantine drop <key>…|--all    forget quarantine entries (asks on a terminal, needs --yes elsewhere)
          retention --dry-run             rows the pruner would delete now, per table (RETENTION_DAYS, AUDIT_RETENTION_DAYS)
          retention [--yes]               run the pruner once now, as the workers do every RETENTION_INTERVAL_SECONDS
          restore-guard --since T --yes   after a database restore: record the starts and reminders since the backup (T) as sent
          restore-guard --none --yes      let the fleet claim again without recording anything (nothing was lost)

        environment: DATABASE_URL, REDIS_URL (not needed by migrate, which prefers MIGRATION_DATABASE_URL), COUNTDOWN_NAMESPACE, START_LEAD_SECONDS, ...
        commands that change what the fleet does (\(confirmedCommands.joined(separator: ", "))) ask on a terminal; elsewhere they need --yes
        exit codes: 0 success, 1 runtime failure, 2 usage error (also a destructive command without --yes off a terminal)
        """

    static let details: [String: String] = [
        "tokens": """
            usage: countdown-admin tokens list [--since T] [--reason R] [--json]
                   countdown-admin tokens restore --since T [--reason R] [--yes] [--json]
            T is an RFC 3339 time (2026-12-01T20:00:00Z) or a duration ago (90s, 15m, 2h, 1d); R keeps only tokens cleared
            for that refusal (e.g. SENDER_ID_MISMATCH). restore puts each cleared token back unless the device registered
            another one since (a runtime token re-creates its session unless the device has another) and re-opens the starts
            that failed with it (the device's backfill sends them while the start window is open); without --yes on a
            terminal it asks first, elsewhere --yes is required.
            """,
        "pause": """
            usage: countdown-admin pause [--kind K]... [--reason TEXT] [--yes] [--json]
            Stops every worker claiming jobs of kind K (start, reminder, reminder_page, end, update, expire, session_end,
            backfill_device, backfill_user; every kind without --kind) within a second. Paused jobs stay due and run after resume.
            Without --yes on a terminal, asks first; elsewhere --yes is required.
            """,
        "resume": "usage: countdown-admin resume [--kind K]... [--json]\nClaims the kinds again (every paused kind without --kind).",
        "migrate": "usage: countdown-admin migrate [--status] [--json]\nApplies missing schema versions in order (through MIGRATION_DATABASE_URL, else DATABASE_URL); prints each one, or that the schema is up to date.\nWith --status: lists applied and pending versions and changes nothing.\nEach migration statement waits at most MIGRATION_LOCK_TIMEOUT_MS (default 2000) for a table lock, then gives way and tries again for up to MIGRATION_LOCK_WAIT_SECONDS (default 600); another migrate holding the migration lock (a transaction-level lock, safe through PgBouncer in transaction mode) is waited for the same way, each wait logged on stderr.\nAn unreachable server (refused, a failover) is tried again for up to MIGRATION_CONNECT_WAIT_SECONDS (default 120).",
        "cancel": "usage: countdown-admin cancel <streamId> [--yes] [--json]\nCancels a scheduled stream exactly like POST /live-stream/:id/cancel. Without --yes on a terminal, asks first; elsewhere --yes is required.",
        "set-status": "usage: countdown-admin set-status <streamId> ready|started|expired [--yes] [--json]\nEnds the stream's Live Activities with that reason. Without --yes on a terminal, asks first; elsewhere --yes is required.",
        "reschedule": "usage: countdown-admin reschedule <streamId> <ISO-8601 time with zone> [--yes] [--json]\nMoves the planned start; jobs follow and running activities get an update push. Without --yes on a terminal, asks first; elsewhere --yes is required.",
        "show": "usage: countdown-admin show <streamId> [--json]",
        "stats": "usage: countdown-admin stats [--json]",
        "dead": "usage: countdown-admin dead list [--limit N] [--json] | dead retry <jobId>|--all | dead drop <jobId> [--yes]\nDropping asks first on a terminal; elsewhere --yes is required.",
        "reconcile": "usage: countdown-admin reconcile [--dry-run] [--json]\nCompares PostgreSQL with the queue and repairs the difference (with --dry-run: only reports).",
        "quarantine": "usage: countdown-admin quarantine list [--json] | quarantine retry <key>…|--all [--json] | quarantine drop <key>…|--all [--yes] [--json]\nRows the relay or the reconciler could not read or plan (key: the stream id). retry re-plans a stream through the outbox when it now reads and removes it from the quarantine; drop only forgets entries.",
        "retention": "usage: countdown-admin retention --dry-run [--json] | retention [--yes] [--json]\nCountdown's own rows that have aged out (SPEC 12.3): a stream's rows in the countdown_* tables and its sessions RETENTION_DAYS after it first left scheduled (never while it is scheduled), token invalidations and unnamed broadcast channels (countdown_broadcast_orphans) after RETENTION_DAYS, audit rows after AUDIT_RETENTION_DAYS. --dry-run prints how many rows of each table would go and changes nothing; without it, deletes them now in batches of RETENTION_BATCH_ROWS (asks on a terminal; elsewhere --yes is required). The backend's streams, users, devices, participants and reminders are never deleted.",
        "restore-guard": "usage: countdown-admin restore-guard --since T --yes [--json] | restore-guard --none --yes [--json]\nRun after PostgreSQL was restored from a backup, before the workers start again (docs/runbooks.md, \"Restoring PostgreSQL from a backup\"). T is the backup's time: an RFC 3339 time (2026-12-01T20:00:00Z) or a duration ago (90s, 15m, 2h, 1d), not in the future. Every eligible (stream, user, device) whose start window overlaps [T, now] is recorded as sent (ledger status assumed_sent, reason restored) and every active reminder due in that span as sent: none goes out a second time, and a start that really was not sent is given up (counted in the output). Updates and ends still go. Then the fleet's ledger watermark is cleared and the workers claim starts, backfills and reminders again.\n--none clears the watermark only (the database did not lose any start). Without --since or --none, without --yes, or with a future time: refused, nothing changed (exit 2).",
        "seed-demo": "usage: countdown-admin seed-demo [--t60-in SECONDS] [--force] [--json]\nRefuses a database holding non-demo users, devices or streams unless --force. Inserts demo users, devices and streams relative to the database clock and START_LEAD_SECONDS; the first stream's start window opens after --t60-in seconds (default 8).",
    ]
}
