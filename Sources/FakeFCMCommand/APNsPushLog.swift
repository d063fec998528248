import Foundation
import HTTPServer
import JSON
import Synchronization

/// What the fake APNs accepted (token pushes and broadcasts; newest `capacity` kept, every one appended to the
/// record file) and answer counts.
final class APNsPushLog: Sendable {
    /// One accepted push as `GET /fake/messages` and the record file show it.
    struct Entry: Encodable, Sendable {
        /// Increases by one per accepted push, across resets; page with `?since=<seq>`.
        let seq: Int
        /// Epoch seconds with milliseconds.
        let receivedAt: Double
        /// `device` or `broadcast`.
        let kind: RequestLog.Kind
        /// `aps.event` (`start`, `update`, `end`), or `""`.
        let event: String
        /// The device (activity or push-to-start) token of a token push.
        let token: String?
        /// The channel of a broadcast.
        let channelId: String?
        /// The answer's `apns-id` (token push) or `apns-request-id` (broadcast).
        let id: String
        /// The request's `apns-*` headers, names in lower case.
        let headers: [String: String]
        /// The JSON body as sent.
        let payload: JSONValue
    }

    /// `GET /fake/stats`.
    struct Stats: Encodable, Sendable {
        var accepted = 0
        var rejected = 0
        var dropped = 0
        var byKind: [String: Int] = [:]
        var byEvent: [String: Int] = [:]
        var byStatus: [String: Int] = [:]
        var byReason: [String: Int] = [:]
        var channelsCreated = 0
        var channelsDeleted = 0
    }

    private struct State {
        var entries: [Entry] = []
        var nextSeq = 1
        var stats = Stats()
    }

    let capacity: Int
    private let recordFile: RecordFile?
    private let state = Mutex(State())
    private let now: @Sendable () -> Date

    init(capacity: Int, recordFile: RecordFile?, now: @escaping @Sendable () -> Date) {
        self.capacity = capacity
        self.recordFile = recordFile
        self.now = now
    }

    /// Keeps and records an accepted push (`request`: its `apns-*` headers).
    func accept(kind: RequestLog.Kind, target: String, id: String, request: HTTPRequest, payload: JSONValue) {
        let headers = RequestLog.headers(of: request).filter { $0.key.hasPrefix("apns-") }
        let time = (now().timeIntervalSince1970 * 1000).rounded() / 1000
        let event = payload["aps"]?["event"]?.string ?? ""
        state.withLock { state in
            let entry = Entry(
                seq: state.nextSeq, receivedAt: time, kind: kind, event: event, token: kind == .device ? target : nil,
                channelId: kind == .broadcast ? target : nil, id: id, headers: headers, payload: payload)
            state.nextSeq += 1
            if capacity > 0 { state.entries.append(entry) }
            if state.entries.count > capacity * 2 { state.entries.removeFirst(state.entries.count - capacity) }
            state.stats.accepted += 1
            state.stats.byKind[kind.rawValue, default: 0] += 1
            state.stats.byEvent[event, default: 0] += 1
            state.stats.byStatus["200", default: 0] += 1
            if let recordFile, let line = try? HTTPResponse.jsonEncoder.encode(entry) {
                recordFile.append(line: Array(line) + [0x0A], seq: entry.seq)
            }
        }
    }

    /// Counts a request answered with an error (or dropped: status 0).
    func reject(status: Int, reason: String?) {
        state.withLock { state in
            guard status > 0 else {
                state.stats.dropped += 1
                return
            }
            state.stats.rejected += 1
            state.stats.byStatus[String(status), default: 0] += 1
            if let reason { state.stats.byReason[reason, default: 0] += 1 }
        }
    }

    func countChannel(created: Bool) {
        state.withLock { state in
            if created { state.stats.channelsCreated += 1 } else { state.stats.channelsDeleted += 1 }
        }
    }

    /// Kept pushes with `seq > since`, oldest first, at most `limit`, optionally of one kind, for one device token or
    /// channel, of one event.
    func entries(since: Int, limit: Int, kind: RequestLog.Kind?, target: String?, event: String?) -> [Entry] {
        let kept = state.withLock { $0.entries.suffix(capacity) }
        return Array(kept.lazy.filter { entry in
            entry.seq > since && (kind == nil || entry.kind == kind) && (event == nil || entry.event == event)
                && (target == nil || entry.token == target || entry.channelId == target)
        }.prefix(limit))
    }

    var stats: Stats { state.withLock { $0.stats } }

    /// Forgets kept pushes and statistics; sequence numbers keep increasing.
    func reset() {
        state.withLock { state in
            state.entries = []
            state.stats = Stats()
        }
    }
}
