import Configuration
import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
import CountdownMaintenance
import DelayQueue
import Foundation
import Postgres

#if canImport(Glibc)
import Glibc
#endif

/// Each subcommand: arguments validated first, then the work, then a text or JSON answer.
enum AdminCommands {
    static func run(_ command: String, _ arguments: [String]) async throws {
        switch command {
        case "migrate": try await migrate(arguments)
        case "cancel": try await cancel(arguments)
        case "set-status": try await setStatus(arguments)
        case "reschedule": try await reschedule(arguments)
        case "show": try await show(arguments)
        case "stats": try await stats(arguments)
        case "dead": try await dead(arguments)
        case "reconcile": try await reconcile(arguments)
        case "seed-demo": try await seedDemo(arguments)
        case "tokens": try await tokens(arguments)
        case "pause": try await pause(arguments)
        case "resume": try await resume(arguments)
        case "quarantine": try await quarantine(arguments)
        case "retention": try await retention(arguments)
        case "restore-guard": try await restoreGuard(arguments)
        default: throw UsageError("unknown command \"\(command)\"")
        }
    }

    /// - Parameter positionals: the names of exactly the positionals expected; `nil` when the caller checks them.
    static func parse(_ arguments: [String], _ command: String, flags: Set<String> = ["json"], values: Set<String> = [],
                              positionals: [String]?) throws -> ParsedArguments {
        let parsed = try ParsedArguments(arguments, booleanFlags: flags, valueFlags: values)
        if parsed.has("help") {
            print(AdminUsage.details[command] ?? AdminUsage.summary)
            exit(0)
        }
        if let positionals { try parsed.expectPositionals(positionals) }
        return parsed
    }

    static func migrate(_ arguments: [String]) async throws {
        let parsed = try parse(arguments, "migrate", flags: ["json", "status"], positionals: [])
        let environment = Environment()
        let variable = environment.optionalString("MIGRATION_DATABASE_URL") == nil ? "DATABASE_URL" : "MIGRATION_DATABASE_URL"
        let url = try environment.url(variable, schemes: ["postgres", "postgresql"])
        let lockPolicy = MigrationLockPolicy(
            lockTimeout: .milliseconds(try environment.integer(
                "MIGRATION_LOCK_TIMEOUT_MS", default: Int(MigrationLockPolicy.defaultLockTimeout.components.seconds) * 1000,
                range: 1...600_000)),
            patience: .seconds(try environment.integer(
                "MIGRATION_LOCK_WAIT_SECONDS", default: Int(MigrationLockPolicy.defaultPatience.components.seconds),
                range: 0...86_400)),
            connectPatience: .seconds(try environment.integer(
                "MIGRATION_CONNECT_WAIT_SECONDS", default: Int(MigrationLockPolicy.defaultConnectPatience.components.seconds),
                range: 0...86_400)))
        let database = PostgresClient(configuration: try PostgresConfiguration(url: url), maxConnections: 1)
        defer { database.close() }
        let json = parsed.has("json")
        if parsed.has("status") {
            let status = try await Migrator().status(database)
            AdminOutput(json: json).emit(status) { AdminText.migrationStatus(status) }
            return
        }
        let report = try await Migrator(lockPolicy: lockPolicy).migrate(database, progress: { migration in
            if !json { print("applying \(migration.version): \(migration.name)") }
        }, lockWait: { wait in
            // On stderr in both modes: stdout stays the report.
            FileHandle.standardError.write(Data(AdminText.migrationLockWait(wait, policy: lockPolicy).utf8))
        }, reconnect: { wait in
            FileHandle.standardError.write(Data(AdminText.migrationConnectionWait(wait, policy: lockPolicy).utf8))
        })
        struct Output: Encodable { var applied: [Int]; var version: Int }
        AdminOutput(json: json).emit(Output(applied: report.applied, version: report.currentVersion)) {
            report.applied.isEmpty ? "schema is up to date (version \(report.currentVersion)); nothing to do"
                : "applied \(report.applied.count) migration(s); schema is at version \(report.currentVersion)"
        }
    }

    static func cancel(_ arguments: [String]) async throws {
        let parsed = try parse(arguments, "cancel", flags: ["json", "yes"], positionals: ["streamId"])
        let streamID = parsed.positionals[0]
        try IdentifierRule.validate(streamID, what: "stream id")
        guard try Confirmation.ask("Cancel stream \(streamID)? Its Live Activities end and its reminders are cancelled.",
                                   command: "cancel", yes: parsed.has("yes")) else { return }
        try await end(streamID, as: .cancelled, json: parsed.has("json"))
    }

    static func setStatus(_ arguments: [String]) async throws {
        let parsed = try parse(arguments, "set-status", flags: ["json", "yes"], positionals: ["streamId", "status"])
        let streamID = parsed.positionals[0]
        try IdentifierRule.validate(streamID, what: "stream id")
        guard let status = StreamStatus(rawValue: parsed.positionals[1]), status.isTerminal, status != .cancelled else {
            throw UsageError("status must be ready, started or expired (use cancel to cancel), got \"\(parsed.positionals[1])\"")
        }
        guard try Confirmation.ask("End stream \(streamID) as \(status.rawValue)? Its Live Activities end and its jobs are removed.",
                                   command: "set-status", yes: parsed.has("yes")) else { return }
        try await end(streamID, as: status, json: parsed.has("json"))
    }

    private static func end(_ streamID: String, as status: StreamStatus, json: Bool) async throws {
        let connections = try AdminConnections()
        defer { connections.close() }
        let report = try await StreamEnding.end(streamID, as: status, database: connections.database, queue: connections.queue)
        AdminOutput(json: json).emit(report) {
            guard report.changed else {
                return "stream \(streamID) is already \(report.status); nothing changed"
                    + (report.sessionsToEnd > 0 ? " (\(report.sessionsToEnd) session(s) still waiting for their end push)" : "")
            }
            return """
                stream \(streamID): \(report.previousStatus) → \(report.status)
                  pre-start jobs removed:  \(report.jobsRemoved)
                  reminders cancelled:     \(report.remindersCancelled)
                  sessions to end:         \(report.sessionsToEnd) (end pushes queued with reason \(report.status))
                """
        }
    }

    static func reschedule(_ arguments: [String]) async throws {
        let parsed = try parse(arguments, "reschedule", flags: ["json", "yes"], positionals: ["streamId", "time"])
        let streamID = parsed.positionals[0]
        try IdentifierRule.validate(streamID, what: "stream id")
        let time = try TimeArgument.parse(parsed.positionals[1])
        guard try Confirmation.ask("Move stream \(streamID) to \(TimeArgument.format(time))? Its jobs move and running activities are updated.",
                                   command: "reschedule", yes: parsed.has("yes")) else { return }
        let connections = try AdminConnections()
        defer { connections.close() }
        let report = try await StreamCommands(database: connections.database).reschedule(streamID, to: time)
        AdminOutput(json: parsed.has("json")).emit(report) {
            "stream \(streamID) now starts at \(AdminOutput.time(report.plannedStartAt)); its jobs follow, running activities get an update push"
        }
    }

    static func show(_ arguments: [String]) async throws {
        let parsed = try parse(arguments, "show", positionals: ["streamId"])
        let streamID = parsed.positionals[0]
        try IdentifierRule.validate(streamID, what: "stream id")
        let connections = try AdminConnections()
        defer { connections.close() }
        guard let report = try await StreamReport.load(streamID, database: connections.store, queue: connections.queue,
                                                       settings: connections.config.flow, transport: connections.config.pushTransport) else {
            throw AdminFailure("stream \(streamID) does not exist")
        }
        AdminOutput(json: parsed.has("json")).emit(report) { AdminText.stream(report) }
    }

    static func stats(_ arguments: [String]) async throws {
        let parsed = try parse(arguments, "stats", positionals: [])
        let connections = try AdminConnections()
        defer { connections.close() }
        let stats = try await SystemStats.load(database: connections.store, queue: connections.queue, settings: connections.config.flow)
        AdminOutput(json: parsed.has("json")).emit(stats) { AdminText.stats(stats) }
    }

    /// The action of a command that has actions (`dead list`, `tokens restore`, …) and the arguments after it;
    /// `--help` in its place prints the command's usage and exits.
    static func action(of arguments: [String], _ command: String, expected: String) throws -> (String, [String]) {
        guard let action = arguments.first else { throw UsageError("missing action: \(expected)") }
        if action == "--help" || action == "-h" {
            print(AdminUsage.details[command] ?? AdminUsage.summary)
            exit(0)
        }
        return (action, Array(arguments.dropFirst()))
    }

    static func dead(_ arguments: [String]) async throws {
        let (action, rest) = try action(of: arguments, "dead", expected: "list, retry or drop")
        switch action {
        case "list":
            let parsed = try parse(rest, "dead", values: ["limit"], positionals: [])
            guard let limit = Int(parsed.flags["limit"] ?? "100"), (1...100_000).contains(limit) else {
                throw UsageError("--limit must be a number from 1 to 100000")
            }
            let connections = try AdminConnections()
            defer { connections.close() }
            let letters = try await connections.queue.deadLetters(limit: limit)
            struct Letter: Encodable { var id: String; var kind: String?; var attempts: Int; var lastError: String; var deadAt: Date }
            AdminOutput(json: parsed.has("json")).emit(letters.map { Letter(id: $0.id, kind: $0.kind, attempts: $0.attempts, lastError: $0.lastError, deadAt: $0.deadAt) }) {
                "dead letters (\(letters.count)):\n" + AdminOutput.table(["JOB", "ATTEMPTS", "SINCE", "LAST ERROR"], letters.map {
                    [$0.id, String($0.attempts), AdminOutput.time($0.deadAt), String($0.lastError.prefix(100))]
                })
            }
        case "retry":
            let parsed = try parse(rest, "dead", flags: ["json", "all"], positionals: nil)
            guard parsed.has("all") != (parsed.positionals.count == 1), parsed.positionals.count <= 1 else {
                throw UsageError("give one job id or --all")
            }
            let connections = try AdminConnections()
            defer { connections.close() }
            let ids = parsed.has("all") ? try await connections.queue.deadLetters(limit: 1_000_000).map(\.id) : parsed.positionals
            let moved = try await connections.queue.redrive(ids)
            if !parsed.has("all") && moved == 0 {
                throw AdminFailure("no dead letter \(ids[0])")
            }
            struct Moved: Encodable { var retried: Int }
            AdminOutput(json: parsed.has("json")).emit(Moved(retried: moved)) { "\(moved) job(s) back on the queue, due now" }
        case "drop":
            let parsed = try parse(rest, "dead", flags: ["json", "yes"], positionals: ["jobId"])
            guard try Confirmation.ask("Delete dead letter \(parsed.positionals[0])? It cannot be retried afterwards.",
                                       command: "dead drop", yes: parsed.has("yes")) else { return }
            let connections = try AdminConnections()
            defer { connections.close() }
            let dropped = try await connections.queue.dropDeadLetters(parsed.positionals)
            guard dropped > 0 else {
                throw AdminFailure("no dead letter \(parsed.positionals[0])")
            }
            struct Dropped: Encodable { var dropped: Int }
            AdminOutput(json: parsed.has("json")).emit(Dropped(dropped: dropped)) { "dropped \(parsed.positionals[0])" }
        default:
            throw UsageError("unknown action \"\(action)\": use list, retry or drop")
        }
    }

    static func reconcile(_ arguments: [String]) async throws {
        let parsed = try parse(arguments, "reconcile", flags: ["json", "dry-run"], positionals: [])
        let connections = try AdminConnections()
        defer { connections.close() }
        let progress = ProgressLine(enabled: !parsed.has("json"))
        let session = PostgresSession(configuration: try PostgresConfiguration(url: connections.config.databaseURL))
        defer { session.close() }
        let reconciler = Reconciler(session: session, queue: connections.queue, planner: connections.planner)
        let report = try await reconciler.run(dryRun: parsed.has("dry-run")) { done, total in progress.update(done, total) }
        progress.finish()
        AdminOutput(json: parsed.has("json")).emit(report) { AdminText.reconcile(report) }
    }

    static func seedDemo(_ arguments: [String]) async throws {
        let parsed = try parse(arguments, "seed-demo", flags: ["json", "force"], values: ["t60-in"], positionals: [])
        guard let seconds = Int(parsed.flags["t60-in"] ?? "8"), (1...3600).contains(seconds) else {
            throw UsageError("--t60-in must be seconds from 1 to 3600")
        }
        let environment = Environment()
        let config = try CountdownConfig.load(from: environment, requirePush: false)
        let database = PostgresClient(configuration: try PostgresConfiguration(url: config.databaseURL), maxConnections: 1)
        defer { database.close() }
        let foreign = try await database.withConnection { try DemoSeedQueries.foreignRows(on: $0) }
        if foreign > 0 && !parsed.has("force") {
            throw AdminFailure("the database holds \(foreign) user, device or stream row(s) that are not demo rows; "
                + "seed-demo is for demo databases (pass --force to seed anyway)")
        }
        let summary = try await DemoSeed.seed(database, settings: config.flow, secondsUntilT60: seconds)
        AdminOutput(json: parsed.has("json")).emit(summary) {
            "seeded \(summary.users) users, \(summary.devices) devices, \(summary.reminders) reminders and streams:\n"
                + summary.streams.sorted { $0.value < $1.value }.map { "  \($0.key) starts at \(AdminOutput.time($0.value))" }.joined(separator: "\n")
        }
    }
}

/// A command that ran but could not do what was asked (unknown id, …); exit code 1.
struct AdminFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
