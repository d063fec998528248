import Foundation
import JSON
import Synchronization

/// Accepted messages (newest `capacity` kept in memory, all appended to the record file) and send statistics.
final class MessageLog: Sendable {
    /// What `GET /fake/stats` answers.
    struct Stats: Encodable, Sendable {
        var accepted = 0
        var rejected = 0
        var dropped = 0
        var validatedOnly = 0
        var tokensIssued = 0
        var tokensRefused = 0
        var byEvent: [String: Int] = [:]
        var byStatus: [String: Int] = [:]
        var byErrorCode: [String: Int] = [:]
    }

    /// A kept message without its `message`, and the request body as received (much smaller than a parsed tree).
    private struct Kept: Sendable {
        let summary: RecordedMessage
        let body: Data
    }

    private struct State {
        /// The newest `capacity` are kept; older ones are dropped in bulk once twice as many wait.
        var messages: [Kept] = []
        var nextSeq = 1
        var stats = Stats()
    }

    let capacity: Int
    private let state = Mutex(State())
    private let recordFile: RecordFile?
    private let now: @Sendable () -> Date

    init(capacity: Int, recordFile: RecordFile?, now: @escaping @Sendable () -> Date) {
        self.capacity = capacity
        self.recordFile = recordFile
        self.now = now
    }

    /// Records an accepted message (`body` is the request as received) and returns its name.
    func accept(_ message: ValidatedMessage, body: Data, project: String) -> String {
        let receivedAt = (now().timeIntervalSince1970 * 1000).rounded() / 1000
        return state.withLock { state in
            let seq = state.nextSeq
            state.nextSeq += 1
            let name = "projects/\(project)/messages/fake-\(seq)"
            let summary = RecordedMessage(
                seq: seq, receivedAt: receivedAt, project: project, name: name, event: message.event, token: message.token,
                liveActivityToken: message.liveActivityToken)
            if capacity > 0 { state.messages.append(Kept(summary: summary, body: body)) }
            if state.messages.count > capacity * 2 { state.messages.removeFirst(state.messages.count - capacity) }
            state.stats.accepted += 1
            state.stats.byEvent[message.event, default: 0] += 1
            state.stats.byStatus["200", default: 0] += 1
            recordFile?.append(line: summary.recordLine(body: body), seq: seq)
            return name
        }
    }

    /// Counts a send answered with an error.
    func reject(status: Int, errorCode: String?) {
        state.withLock { state in
            state.stats.rejected += 1
            state.stats.byStatus[String(status), default: 0] += 1
            if let errorCode { state.stats.byErrorCode[errorCode, default: 0] += 1 }
        }
    }

    func countDropped() { state.withLock { $0.stats.dropped += 1 } }
    func countValidatedOnly() { state.withLock { $0.stats.validatedOnly += 1 } }
    func countToken(issued: Bool) {
        state.withLock { state in
            if issued { state.stats.tokensIssued += 1 } else { state.stats.tokensRefused += 1 }
        }
    }

    /// Kept messages with `seq > since`, oldest first, at most `limit`, optionally only those for `token`
    /// (FCM or Live Activity token) and of `event` (e.g. `android_end`; `android_` alone: every Android countdown message).
    func messages(since: Int, limit: Int, token: String?, event: String? = nil) -> [RecordedMessage] {
        let selected: [Kept] = state.withLock { state in
            var result: [Kept] = []
            let kept = state.messages.suffix(capacity)
            let start = kept.firstIndex { $0.summary.seq > since } ?? kept.endIndex
            for entry in kept[start...] where token == nil || entry.summary.token == token || entry.summary.liveActivityToken == token {
                if let event, entry.summary.event != event && !(event.hasSuffix("_") && entry.summary.event.hasPrefix(event)) { continue }
                if result.count == limit { break }
                result.append(entry)
            }
            return result
        }
        return selected.map { kept in
            var message = kept.summary
            message.message = JSONValue.parse(kept.body)?["message"] ?? .null
            return message
        }
    }

    var stats: Stats { state.withLock { $0.stats } }

    /// Forgets kept messages and statistics; sequence numbers keep increasing.
    func reset() {
        state.withLock { state in
            state.messages = []
            state.stats = Stats()
        }
    }
}
