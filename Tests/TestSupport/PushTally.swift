import Foundation
import Synchronization

/// The fake's accepted messages by kind, read incrementally from its record file (`--record`): each `refresh`
/// reads only what was appended since the last one, so polling while many pushes arrive stays cheap.
public final class PushTally: @unchecked Sendable {
    /// What one line of the record file is.
    public enum Record: Equatable, Sendable {
        /// An iOS start (stream, push-to-start token) or an Android countdown start (stream, FCM token).
        case start(StartKey, receivedAt: Double)
        case reminder(stream: String, receivedAt: Double)
        /// Any other accepted message, or a line that is not a JSON object.
        case other
    }

    private struct State {
        var offset: UInt64 = 0
        var partial = Data()
        var starts: [(key: StartKey, receivedAt: Double)] = []
        var reminders: [(stream: String, receivedAt: Double)] = []
        var other = 0
        var startsByStream: [String: Int] = [:]
        var remindersByStream: [String: Int] = [:]
    }

    public let recordPath: String
    private let state = Mutex(State())

    public init(recordPath: String) {
        self.recordPath = recordPath
    }

    /// Reads the lines appended since the last call (a line not yet complete waits for the next).
    @discardableResult
    public func refresh() throws -> PushTally {
        try state.withLock { state in
            // The fake creates the file when it starts; before that there is nothing to read.
            guard FileManager.default.fileExists(atPath: recordPath) else { return }
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: recordPath))
            defer { try? handle.close() }
            try handle.seek(toOffset: state.offset)
            let chunk = try handle.readToEnd() ?? Data()
            state.offset += UInt64(chunk.count)
            var data = state.partial + chunk
            guard let lastNewline = data.lastIndex(of: UInt8(ascii: "\n")) else {
                state.partial = data
                return
            }
            state.partial = Data(data[data.index(after: lastNewline)...])
            data = Data(data[..<lastNewline])
            for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
                switch Self.classify(Data(line)) {
                case .start(let key, let receivedAt):
                    state.starts.append((key, receivedAt))
                    state.startsByStream[key.stream, default: 0] += 1
                case .reminder(let stream, let receivedAt):
                    state.reminders.append((stream, receivedAt))
                    state.remindersByStream[stream, default: 0] += 1
                case .other:
                    state.other += 1
                }
            }
        }
        return self
    }

    public var starts: [(key: StartKey, receivedAt: Double)] { state.withLock { $0.starts } }
    public var reminders: [(stream: String, receivedAt: Double)] { state.withLock { $0.reminders } }
    public var other: Int { state.withLock { $0.other } }
    /// The starts read so far from the `index`-th on (a reader that keeps its place copies only what is new).
    public func starts(from index: Int) -> [(key: StartKey, receivedAt: Double)] {
        state.withLock { index < $0.starts.count ? Array($0.starts[max(index, 0)...]) : [] }
    }

    /// The reminders read so far from the `index`-th on.
    public func reminders(from index: Int) -> [(stream: String, receivedAt: Double)] {
        state.withLock { index < $0.reminders.count ? Array($0.reminders[max(index, 0)...]) : [] }
    }

    /// Starts and reminders read so far (without copying them).
    public var tallied: Int { state.withLock { $0.starts.count + $0.reminders.count } }

    /// Starts accepted for streams whose id starts with `prefix`, copies included.
    public func startCount(prefix: String) -> Int {
        state.withLock { $0.startsByStream.reduce(0) { $0 + ($1.key.hasPrefix(prefix) ? $1.value : 0) } }
    }

    public func reminderCount(stream: String) -> Int { state.withLock { $0.remindersByStream[stream] ?? 0 } }

    public func startKeys(prefix: String) -> [StartKey] {
        state.withLock { $0.starts.filter { $0.key.stream.hasPrefix(prefix) }.map(\.key) }
    }

    public func startTimes(prefix: String) -> [Double] {
        state.withLock { $0.starts.filter { $0.key.stream.hasPrefix(prefix) }.map(\.receivedAt) }
    }

    /// What one record line is: `start` (its `liveActivityToken` is the push-to-start token), `android_start`
    /// (its FCM `token`), a message whose data says `type: stream_reminder`, or something else.
    public static func classify(_ line: Data) -> Record {
        guard let record = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] else { return .other }
        let message = record["message"] as? [String: Any] ?? [:]
        let data = message["data"] as? [String: Any] ?? [:]
        let receivedAt = (record["receivedAt"] as? NSNumber)?.doubleValue ?? 0
        if let key = startKey(record, message: message, data: data) { return .start(key, receivedAt: receivedAt) }
        guard data["type"] as? String == "stream_reminder", let stream = data["streamId"] as? String else { return .other }
        return .reminder(stream: stream, receivedAt: receivedAt)
    }

    private static func startKey(_ record: [String: Any], message: [String: Any], data: [String: Any]) -> StartKey? {
        switch record["event"] as? String {
        case "android_start":
            guard let stream = data["streamId"] as? String, !stream.isEmpty else { return nil }
            return StartKey(stream: stream, token: record["token"] as? String ?? "")
        case "start":
            let apns = message["apns"] as? [String: Any]
            let aps = (apns?["payload"] as? [String: Any])?["aps"] as? [String: Any]
            guard let stream = (aps?["attributes"] as? [String: Any])?["streamId"] as? String else { return nil }
            return StartKey(stream: stream, token: record["liveActivityToken"] as? String ?? "")
        default:
            return nil
        }
    }
}
