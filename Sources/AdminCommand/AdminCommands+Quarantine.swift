import CountdownAdmin
import CountdownMaintenance
import CountdownStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension AdminCommands {
    static func quarantine(_ arguments: [String]) async throws {
        let (action, rest) = try action(of: arguments, "quarantine", expected: "list, retry or drop")
        switch action {
        case "list":
            let parsed = try parse(rest, "quarantine", positionals: [])
            let connections = try AdminConnections()
            defer { connections.close() }
            let entries = try await connections.store.quarantineEntries()
            AdminOutput(json: parsed.has("json")).emit(entries) {
                "quarantined rows (\(entries.count)):\n" + AdminOutput.table(["KIND", "KEY", "FOUND BY", "SEEN", "FIRST", "LAST", "REASON"], entries.map {
                    [$0.kind, $0.key, $0.foundBy, String($0.seenCount), AdminOutput.time($0.firstSeenAt), AdminOutput.time($0.lastSeenAt),
                     String($0.reason.prefix(100))]
                })
            }
        case "retry":
            let parsed = try parse(rest, "quarantine", flags: ["json", "all"], positionals: nil)
            let keys = try selection(parsed)
            let connections = try AdminConnections()
            defer { connections.close() }
            let report = try await QuarantineActions.retry(keys, database: connections.store)
            if let keys, report.requeued.isEmpty, report.gone.isEmpty, report.stillFailing.isEmpty {
                throw AdminFailure("nothing quarantined under \(keys.joined(separator: ", "))")
            }
            AdminOutput(json: parsed.has("json")).emit(report) {
                (["\(report.requeued.count) planned again through the outbox, \(report.gone.count) gone (removed)"]
                    + report.stillFailing.sorted { $0.key < $1.key }.map { "  still failing: \($0.key): \($0.value)" })
                    .joined(separator: "\n")
            }
        case "drop":
            let parsed = try parse(rest, "quarantine", flags: ["json", "all", "yes"], positionals: nil)
            let keys = try selection(parsed)
            guard try Confirmation.ask("Drop \(keys.map { $0.joined(separator: ", ") } ?? "every entry") from the quarantine?",
                                       command: "quarantine drop", yes: parsed.has("yes")) else { return }
            let connections = try AdminConnections()
            defer { connections.close() }
            let dropped = try await connections.store.dropQuarantined(keys: keys)
            if keys != nil && dropped == 0 { throw AdminFailure("nothing quarantined under \(keys?.joined(separator: ", ") ?? "")") }
            struct Dropped: Encodable { var dropped: Int }
            AdminOutput(json: parsed.has("json")).emit(Dropped(dropped: dropped)) { "dropped \(dropped) quarantine entr\(dropped == 1 ? "y" : "ies")" }
        default:
            throw UsageError("unknown action \"\(action)\": use list, retry or drop")
        }
    }

    /// The keys named, or nil for `--all`; exactly one of the two.
    private static func selection(_ parsed: ParsedArguments) throws -> [String]? {
        guard parsed.has("all") != !parsed.positionals.isEmpty else { throw UsageError("give one or more keys, or --all") }
        return parsed.has("all") ? nil : parsed.positionals
    }
}
