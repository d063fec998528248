import Configuration
import CountdownAdmin
import CountdownDomain
import CountdownMaintenance
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension AdminCommands {
    /// `tokens list [--since T] [--reason R]` and `tokens restore --since T [--reason R] [--yes]`.
    static func tokens(_ arguments: [String]) async throws {
        let (action, rest) = try action(of: arguments, "tokens", expected: "list or restore")
        switch action {
        case "list":
            let parsed = try parse(rest, "tokens", values: ["since", "reason"], positionals: [])
            let since = try SinceArgument.parse(parsed.flags["since"] ?? "24h")
            let connections = try AdminConnections()
            defer { connections.close() }
            let entries = try await TokenInvalidationLog(database: connections.store).list(since: since, reason: parsed.flags["reason"])
            AdminOutput(json: parsed.has("json")).emit(entries) {
                "cleared tokens (\(entries.count)):\n" + AdminOutput.table(["WHEN", "DEVICE", "TOKEN", "VALUE", "REASON", "STREAM", "RESTORED"], entries.map {
                    [AdminOutput.time($0.invalidatedAt), $0.deviceID, $0.token, $0.value, $0.reason, $0.streamID ?? "—", AdminOutput.time($0.restoredAt)]
                })
            }
        case "restore":
            let parsed = try parse(rest, "tokens", flags: ["json", "yes"], values: ["since", "reason"], positionals: [])
            guard let sinceText = parsed.flags["since"] else { throw UsageError("restore needs --since T (e.g. --since 2h)") }
            let since = try SinceArgument.parse(sinceText)
            let reason = parsed.flags["reason"]
            let connections = try AdminConnections()
            defer { connections.close() }
            let log = TokenInvalidationLog(database: connections.store)
            let pending = parsed.has("yes") ? 0 : try await log.list(since: since, reason: reason).filter { $0.restoredAt == nil }.count
            guard try Confirmation.ask("Restore up to \(pending) cleared token(s) since \(sinceText)?", command: "tokens restore",
                                       yes: parsed.has("yes")) else { return }
            let report = try await log.restore(since: since, reason: reason)
            AdminOutput(json: parsed.has("json")).emit(report) {
                "restored \(report.restoredTotal) token(s)"
                    + (report.restored.isEmpty ? "" : " (" + report.restored.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")")
                    + "; \(report.skippedChanged) left alone (the device has another token or owner now, or is gone)"
            }
        default:
            throw UsageError("unknown action \"\(action)\": use list or restore")
        }
    }
}
