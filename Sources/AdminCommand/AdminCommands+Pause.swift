import Configuration
import CountdownAdmin
import CountdownDomain
import CountdownMaintenance
import CountdownStore
import DelayQueue
import Foundation

extension AdminCommands {
    /// `pause [--kind K]... [--reason TEXT] [--yes]`: no `--kind` pauses every kind; asks first (`Confirmation`).
    static func pause(_ arguments: [String]) async throws {
        let (kinds, rest) = try kindFlags(arguments)
        let parsed = try parse(rest, "pause", flags: ["json", "yes"], values: ["reason"], positionals: [])
        let reason = parsed.flags["reason"] ?? ""
        try IdentifierRule.validate(reason.isEmpty ? "-" : reason, what: "--reason")
        let what = kinds.isEmpty ? "every job kind" : kinds.joined(separator: ", ")
        guard try Confirmation.ask("Pause \(what) on every worker? Nothing of it is sent until resume.",
                                   command: "pause", yes: parsed.has("yes")) else { return }
        let connections = try AdminConnections()
        defer { connections.close() }
        let targets = kinds.isEmpty ? CountdownJob.Kind.allCases.map(\.rawValue) : kinds
        // PostgreSQL first (the truth every worker mirrors into Redis), then Redis at once.
        let actor = pauseActor
        let paused = try await connections.database.withConnection { connection in
            try PauseQueries.pause(kinds: targets, actor: actor, reason: reason, on: connection)
            return try PauseQueries.paused(on: connection)
        }
        try await connections.queue.pause(kinds: targets, reason: reason)
        AdminOutput(json: parsed.has("json")).emit(paused) {
            "paused: \(paused.map(\.kind).joined(separator: ", ")) (workers stop claiming them within a second; their jobs stay due)"
        }
    }

    /// `resume [--kind K]...`: no `--kind` resumes every paused kind.
    static func resume(_ arguments: [String]) async throws {
        let (kinds, rest) = try kindFlags(arguments)
        let parsed = try parse(rest, "resume", positionals: [])
        let connections = try AdminConnections()
        defer { connections.close() }
        // Every kind is recorded as resumed when none is named, so workers also lift a pause only Redis had.
        let actor = pauseActor
        let paused = try await connections.database.withConnection { connection in
            try PauseQueries.resume(kinds: kinds.isEmpty ? CountdownJob.Kind.allCases.map(\.rawValue) : kinds, actor: actor, on: connection)
            return try PauseQueries.paused(on: connection)
        }
        let moved = try await connections.queue.resume(kinds: kinds)
        struct Resumed: Encodable { var resumedJobs: Int; var stillPaused: [String] }
        AdminOutput(json: parsed.has("json")).emit(Resumed(resumedJobs: moved, stillPaused: paused.map(\.kind))) {
            "resumed \(kinds.isEmpty ? "every kind" : kinds.joined(separator: ", ")): \(moved) held job(s) claimable again"
                + (paused.isEmpty ? "" : "; still paused: \(paused.map(\.kind).joined(separator: ", "))")
        }
    }

    /// Who pauses or resumes, as recorded in PostgreSQL: the command and `--actor`, else the login user when known.
    static var pauseActor: String {
        if let named = AdminAudit.commandActor { return "countdown-admin (\(named))" }
        let environment = ProcessInfo.processInfo.environment
        let user = environment["USER"] ?? environment["LOGNAME"]
        return "countdown-admin" + (user.map { " (\($0))" } ?? "")
    }

    /// Takes every `--kind K` / `--kind=K` out of `arguments` (the flag repeats), checking each names a job kind.
    static func kindFlags(_ arguments: [String]) throws -> (kinds: [String], rest: [String]) {
        let (values, rest) = ParsedArguments.extract("kind", from: arguments)
        if rest.last == "--kind" { throw UsageError("--kind needs a value") }
        var kinds: [String] = []
        for value in values where !kinds.contains(value) {
            guard CountdownJob.Kind(rawValue: value) != nil else {
                throw UsageError("--kind must be one of \(CountdownJob.Kind.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(value)\"")
            }
            kinds.append(value)
        }
        return (kinds, rest)
    }
}
