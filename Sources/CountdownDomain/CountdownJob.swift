import Foundation
import JSON

/// A unit of work on the queue. The id is deterministic (one job per stream and kind, never two), the
/// payload only names rows: every handler re-reads PostgreSQL, so a late, duplicated or stale job is harmless.
public enum CountdownJob: Hashable, Sendable {
    case start(stream: String)
    case reminder(stream: String)
    /// One page of a large reminder fan-out: the users with an active reminder after `after` through `through`
    /// (nil: to the end), so every worker takes part.
    case reminderPage(stream: String, after: String, through: String?)
    case expire(stream: String)
    case end(stream: String)
    case update(stream: String)
    case sessionEnd(stream: String, device: String)
    case backfillDevice(device: String)
    case backfillUser(user: String)

    public enum Kind: String, Sendable, CaseIterable {
        case start, reminder, expire, end, update
        case reminderPage = "reminder_page"
        case sessionEnd = "session_end"
        case backfillDevice = "backfill_device"
        case backfillUser = "backfill_user"
    }

    public var kind: Kind {
        switch self {
        case .start: .start
        case .reminder: .reminder
        case .reminderPage: .reminderPage
        case .expire: .expire
        case .end: .end
        case .update: .update
        case .sessionEnd: .sessionEnd
        case .backfillDevice: .backfillDevice
        case .backfillUser: .backfillUser
        }
    }

    /// `kind:component[:component]`, components percent-encoded so ids containing `:` stay unambiguous.
    public var id: String {
        switch self {
        case .start(let stream), .reminder(let stream), .expire(let stream), .end(let stream), .update(let stream):
            Self.makeID(kind, [stream])
        case .sessionEnd(let stream, let device): Self.makeID(kind, [stream, device])
        case .reminderPage(let stream, let after, _): Self.makeID(kind, [stream, after])
        case .backfillDevice(let device): Self.makeID(kind, [device])
        case .backfillUser(let user): Self.makeID(kind, [user])
        }
    }

    /// Jobs that must not be queued beside live jobs of the same group: the id prefix of the group, or nil.
    ///
    /// A stream's reminder pages are one group. A second set of pages (a reminder job run again after its
    /// acknowledgement was lost, with other bounds) beside pages still waiting or running would remind the users
    /// whose push is in flight twice; the pages still live already hold every active reminder of the stream.
    public var exclusiveGroup: String? {
        switch self {
        case .reminderPage(let stream, _, _): Self.makeID(kind, [stream]) + ":"
        default: nil
        }
    }

    /// The groups of `jobs` (see `exclusiveGroup`), each once.
    public static func exclusiveGroups(of jobs: [CountdownJob]) -> [String] {
        Array(Set(jobs.compactMap(\.exclusiveGroup))).sorted()
    }

    /// The stream this job is about, if any.
    public var streamID: String? {
        switch self {
        case .start(let stream), .reminder(let stream), .expire(let stream), .end(let stream), .update(let stream),
             .sessionEnd(let stream, _), .reminderPage(let stream, _, _):
            stream
        case .backfillDevice, .backfillUser: nil
        }
    }

    /// The queue payload: a small JSON object naming the rows.
    public var payload: [UInt8] {
        var fields: [String: String] = [:]
        switch self {
        case .start(let stream), .reminder(let stream), .expire(let stream), .end(let stream), .update(let stream):
            fields["stream"] = stream
        case .sessionEnd(let stream, let device):
            fields["stream"] = stream
            fields["device"] = device
        case .reminderPage(let stream, let after, let through):
            fields["stream"] = stream
            fields["after"] = after
            fields["through"] = through
        case .backfillDevice(let device): fields["device"] = device
        case .backfillUser(let user): fields["user"] = user
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array((try? encoder.encode(fields)) ?? Data("{}".utf8))
    }

    /// A payload's members when it is a JSON object of strings, read by the project's strict parser (a repeated
    /// key, invalid UTF-8 or trailing bytes make the payload unreadable: only this project writes payloads).
    static func stringFields(_ payload: [UInt8]) -> [String: String]? {
        guard let members = JSONValue.parse(payload)?.object else { return nil }
        var fields: [String: String] = [:]
        fields.reserveCapacity(members.count)
        for (name, value) in members {
            guard let text = value.string else { return nil }
            fields[name] = text
        }
        return fields
    }

    /// Decodes a claimed job; a bad kind or payload comes back as a `JobDecodingError` value, never a crash.
    public static func decode(kind rawKind: String, payload: [UInt8]) -> Result<CountdownJob, JobDecodingError> {
        guard let kind = Kind(rawValue: rawKind) else {
            return .failure(JobDecodingError(reason: "unknown job kind \"\(rawKind.prefix(40))\""))
        }
        guard let fields = stringFields(payload) else {
            return .failure(JobDecodingError(reason: "payload of a \(kind.rawValue) job is not a JSON object of strings"))
        }
        func field(_ name: String) -> Result<String, JobDecodingError> {
            guard let value = fields[name], !value.isEmpty, value.utf8.count <= 512 else {
                return .failure(JobDecodingError(reason: "\(kind.rawValue) job payload lacks a valid \"\(name)\""))
            }
            return .success(value)
        }
        switch kind {
        case .start: return field("stream").map { .start(stream: $0) }
        case .reminder: return field("stream").map { .reminder(stream: $0) }
        case .expire: return field("stream").map { .expire(stream: $0) }
        case .end: return field("stream").map { .end(stream: $0) }
        case .update: return field("stream").map { .update(stream: $0) }
        case .sessionEnd:
            return field("stream").flatMap { stream in field("device").map { .sessionEnd(stream: stream, device: $0) } }
        case .reminderPage:
            guard let after = fields["after"], after.utf8.count <= 512, fields["through"].map({ !$0.isEmpty && $0.utf8.count <= 512 }) ?? true else {
                return .failure(JobDecodingError(reason: "reminder_page job payload lacks a valid \"after\" or \"through\""))
            }
            return field("stream").map { .reminderPage(stream: $0, after: after, through: fields["through"]) }
        case .backfillDevice: return field("device").map { .backfillDevice(device: $0) }
        case .backfillUser: return field("user").map { .backfillUser(user: $0) }
        }
    }

    static func makeID(_ kind: Kind, _ components: [String]) -> String {
        ([kind.rawValue] + components.map(escape)).joined(separator: ":")
    }

    /// The id of the job of `kind` for one stream.
    public static func streamJobID(_ kind: Kind, stream: String) -> String { makeID(kind, [stream]) }

    private static func escape(_ component: String) -> String {
        component.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: ":", with: "%3A")
    }
}

/// A job whose kind or payload cannot be understood; it is dead-lettered with this reason.
public struct JobDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}
