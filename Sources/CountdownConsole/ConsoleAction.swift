import Foundation

/// An operator action (SPEC 11): its form posts to `path`, a `GET` on `path` is its confirmation page.
public enum ConsoleAction: Sendable, Equatable {
    case cancelStream(String)
    case pause(kind: String?)
    case resume(kind: String?)
    case retryDead(String)
    case dropDead(String)
    case retryQuarantine(String)
    case dropQuarantine(String)
    case restoreTokens(since: String)

    /// A bulk action over more than this many items is refused with the count.
    public static let bulkLimit = 1_000

    /// The audit row's `action`.
    public var name: String {
        switch self {
        case .cancelStream: "stream.cancel"
        case .pause: "pause"
        case .resume: "resume"
        case .retryDead: "dead.retry"
        case .dropDead: "dead.drop"
        case .retryQuarantine: "quarantine.retry"
        case .dropQuarantine: "quarantine.drop"
        case .restoreTokens: "tokens.restore"
        }
    }

    /// What the action does, in words (the confirmation's heading and button).
    public var title: String {
        switch self {
        case .cancelStream(let id): "Cancel stream \(id)"
        case .pause(let kind): kind.map { "Pause \($0) jobs" } ?? "Pause every kind of job"
        case .resume(let kind): kind.map { "Resume \($0) jobs" } ?? "Resume every paused kind"
        case .retryDead(let id): "Retry dead letter \(id)"
        case .dropDead(let id): "Drop dead letter \(id)"
        case .retryQuarantine(let key): "Retry quarantined \(key)"
        case .dropQuarantine(let key): "Drop quarantined \(key)"
        case .restoreTokens(let since): "Restore the tokens cleared since \(since)"
        }
    }

    /// Whether the action is on one thing that must exist (a stream, a dead letter, a quarantined row).
    public var needsItsTarget: Bool {
        switch self {
        case .cancelStream, .retryDead, .dropDead, .retryQuarantine, .dropQuarantine: true
        case .pause, .resume, .restoreTokens: false
        }
    }

    /// The confirmation page's URL: `path` with the fields that choose what is confirmed.
    public var confirmationURL: String {
        switch self {
        case .pause(let kind?), .resume(let kind?): "\(path)?kind=\(Self.segment(kind))"
        case .restoreTokens(let since): "\(path)?since=\(Self.segment(since))"
        default: path
        }
    }

    /// The audit row's `target`.
    public var target: String {
        switch self {
        case .cancelStream(let id), .retryDead(let id), .dropDead(let id), .retryQuarantine(let id), .dropQuarantine(let id): id
        case .pause(let kind), .resume(let kind): kind ?? "all kinds"
        case .restoreTokens(let since): "since \(since)"
        }
    }

    /// The form's URL (ids percent-encoded as one path segment).
    public var path: String {
        switch self {
        case .cancelStream(let id): "/streams/\(Self.segment(id))/cancel"
        case .pause: "/pause"
        case .resume: "/resume"
        case .retryDead(let id): "/dead/\(Self.segment(id))/retry"
        case .dropDead(let id): "/dead/\(Self.segment(id))/drop"
        case .retryQuarantine(let key): "/quarantine/\(Self.segment(key))/retry"
        case .dropQuarantine(let key): "/quarantine/\(Self.segment(key))/drop"
        case .restoreTokens: "/tokens/restore"
        }
    }

    /// The action for a path (and, for pause, resume and restore, the form or query fields); nil when none.
    public static func parse(path: String, field: (String) -> String?) -> ConsoleAction? {
        func between(_ prefix: String, _ suffix: String) -> String? {
            guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.count > prefix.count + suffix.count else { return nil }
            return String(path.dropFirst(prefix.count).dropLast(suffix.count))
        }
        if path == "/pause" { return .pause(kind: field("kind").flatMap { $0.isEmpty ? nil : $0 }) }
        if path == "/resume" { return .resume(kind: field("kind").flatMap { $0.isEmpty ? nil : $0 }) }
        if path == "/tokens/restore" { return .restoreTokens(since: field("since") ?? "") }
        if let id = between("/streams/", "/cancel") { return .cancelStream(id) }
        if let id = between("/dead/", "/retry") { return .retryDead(id) }
        if let id = between("/dead/", "/drop") { return .dropDead(id) }
        if let key = between("/quarantine/", "/retry") { return .retryQuarantine(key) }
        if let key = between("/quarantine/", "/drop") { return .dropQuarantine(key) }
        return nil
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:@")

    /// `id` percent-encoded so it stays one path segment.
    static func segment(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: unreserved) ?? id
    }
}
