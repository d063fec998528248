import Configuration
import CountdownAdmin
import CountdownStore
import Foundation
import Postgres
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The audit rows of countdown-admin's actions (SPEC 11), in the console's `countdown_audit`: actor `--actor`, else
/// the operating-system user; role `admin-cli`; outcome `done`, `refused: not confirmed` or `failed: <error>`.
/// Reading commands (`show`, `stats`, `dead list`, ...) write none.
enum AdminAudit {
    /// Set when the operator answered no at a confirmation prompt (the command then changes nothing).
    static let declined = Mutex(false)

    /// `--actor` of the command line being run (taken out of its arguments by `actor(in:)`), for commands that
    /// record who acted beside the audit row (`pause`, `resume`).
    @TaskLocal static var commandActor: String?

    /// The audit action of a command line, or nil when it only reads (or is not an action).
    static func action(_ command: String, _ arguments: [String]) -> String? {
        let sub = arguments.first ?? ""
        switch command {
        case "cancel": return "stream.cancel"
        case "set-status": return "stream.set-status"
        case "reschedule": return "stream.reschedule"
        case "pause", "resume": return command
        case "dead" where ["retry", "drop"].contains(sub): return "dead.\(sub)"
        case "quarantine" where ["retry", "drop"].contains(sub): return "quarantine.\(sub)"
        case "tokens" where sub == "restore": return "tokens.restore"
        case "retention" where !arguments.contains("--dry-run"): return "retention"
        case "restore-guard": return "restore-guard"
        default: return nil
        }
    }

    /// Takes `--actor NAME` / `--actor=NAME` out of the arguments (the last one counts).
    static func actor(in arguments: [String]) -> (actor: String?, rest: [String]) {
        let (actors, rest) = ParsedArguments.extract("actor", from: arguments)
        return (actors.last, rest)
    }

    /// The operating-system user running the command.
    static var systemUser: String {
        if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.environment["USER"] ?? "uid \(getuid())"
    }

    /// Writes the row; a failure to write it is reported on stderr and does not change the command's exit code.
    static func record(action: String, arguments: [String], actor: String?, outcome: String) async {
        var positionals: [String] = []
        var values: [String: [String]] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                values[String(argument[..<equals]), default: []].append(String(argument[argument.index(after: equals)...]))
            } else if ["--reason", "--since", "--kind", "--limit"].contains(argument), index < arguments.count {
                values[argument, default: []].append(arguments[index])
                index += 1
            } else if !argument.hasPrefix("--"), !["retry", "drop", "restore"].contains(argument) || !positionals.isEmpty || index > 1 {
                positionals.append(argument)
            }
        }
        var target = positionals.first ?? ""
        if action == "tokens.restore" || action == "restore-guard" {
            target = values["--since"].map { "since \($0.first ?? "")" } ?? (arguments.contains("--none") ? "none" : "")
        }
        if action == "pause" || action == "resume" { target = values["--kind"]?.joined(separator: ",") ?? "all kinds" }
        if arguments.contains("--all") { target = "all" }
        let reason = values["--reason"]?.last ?? ""
        let entry = AuditQueries.Entry(actor: actor ?? systemUser, role: "admin-cli", action: action, target: target, reason: reason, outcome: outcome)
        do {
            let url = try Environment().url("DATABASE_URL", schemes: ["postgres", "postgresql"])
            let database = PostgresClient(configuration: try PostgresConfiguration(url: url), maxConnections: 1)
            defer { database.close() }
            try await database.withConnection { _ = try AuditQueries.record(entry, on: $0) }
        } catch {
            FileHandle.standardError.write(Data("countdown-admin: the audit row was not written: \(error)\n".utf8))
        }
    }
}
