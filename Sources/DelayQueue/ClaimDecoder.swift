import Foundation
import Redis

/// Turns the scripts' flat replies into values.
enum ClaimDecoder {
    /// The batch, plus jobs whose data passed the script's check but cannot be decoded here (to dead-letter).
    static func decode(_ reply: RedisReply) throws -> (batch: ClaimBatch, unreadable: [(lease: JobLease, reason: String)]) {
        guard let parts = reply.array, parts.count >= 3, (parts.count - 3) % 4 == 0,
              let now = parts[0].integer, let wake = parts[1].integer, let token = parts[2].string else {
            throw DelayQueueError(.unexpectedReply, "claim answered \(reply)")
        }
        var items: [ClaimedItem] = []
        items.reserveCapacity((parts.count - 3) / 4)
        var unreadable: [(JobLease, String)] = []
        for start in stride(from: 3, to: parts.count, by: 4) {
            guard let id = parts[start].string, case .integer(let attempt) = parts[start + 1],
                  case .integer(let due) = parts[start + 2], case .bulk(let body) = parts[start + 3] else {
                throw DelayQueueError(.unexpectedReply, "claim item \(start) malformed")
            }
            if attempt < 0 {
                items.append(.corrupt(id: id, reason: String(decoding: body, as: UTF8.self)))
                continue
            }
            let lease = JobLease(id: id, token: token, attempt: Int(attempt))
            guard let data = JobData.decode(body) else {
                let reason = "stored kind is not UTF-8"
                unreadable.append((lease, reason))
                items.append(.corrupt(id: id, reason: reason))
                continue
            }
            items.append(.job(ClaimedJob(id: id, kind: data.kind, payload: data.payload, dueAt: date(due), lease: lease)))
        }
        let batch = ClaimBatch(items: items, claimedAt: date(now), nextWakeIn: wake < 0 ? nil : .milliseconds(wake - now))
        return (batch, unreadable)
    }

    static func deadLetters(_ reply: RedisReply) throws -> [DeadLetter] {
        guard let parts = reply.array, parts.count % 3 == 0 else { throw DelayQueueError(.unexpectedReply, "dead letters answered \(reply)") }
        return stride(from: 0, to: parts.count, by: 3).compactMap { start in
            guard let id = parts[start].string else { return nil }
            let info = deadInfo(parts[start + 1].string ?? "")
            let data = parts[start + 2].bytes.flatMap(JobData.decode)
            return DeadLetter(
                id: id, kind: data?.kind, payload: data?.payload, attempts: info.attempts, lastError: info.reason, deadAt: date(info.at))
        }
    }

    static func jobInfos(_ reply: RedisReply, ids: [String]) throws -> [JobInfo] {
        guard let parts = reply.array, parts.count == ids.count * 6 else {
            throw DelayQueueError(.unexpectedReply, "inspect answered \(reply)")
        }
        return ids.enumerated().compactMap { index, id in
            let base = index * 6
            let data = parts[base + 3].bytes.flatMap(JobData.decode)
            let stored = state(parts[base + 4].string)
            let state: JobInfo.State
            var attempts = stored.attempts
            var lastError = stored.error
            if let due = score(parts[base]) {
                state = .waiting(dueAt: date(due))
            } else if let until = score(parts[base + 1]) {
                state = .leased(until: date(until))
            } else if let since = score(parts[base + 2]) {
                state = .dead(since: date(since))
                let info = deadInfo(parts[base + 5].string ?? "")
                attempts = info.attempts
                lastError = info.reason
            } else {
                return nil
            }
            return JobInfo(id: id, kind: data?.kind, payload: data?.payload, state: state, attempts: attempts, lastError: lastError)
        }
    }

    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    private static func score(_ reply: RedisReply) -> Int64? {
        guard let text = reply.string, let value = Double(text) else { return nil }
        return Int64(value)
    }

    /// `attempts|token|error`
    private static func state(_ text: String?) -> (attempts: Int, error: String) {
        guard let text else { return (0, "") }
        let parts = text.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        return (Int(parts.first ?? "") ?? 0, parts.count == 3 ? String(parts[2]) : "")
    }

    /// `attempts|deadAtMs|reason`
    private static func deadInfo(_ text: String) -> (attempts: Int, at: Int64, reason: String) {
        let parts = text.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return (0, 0, text) }
        return (Int(parts[0]) ?? 0, Int64(parts[1]) ?? 0, String(parts[2]))
    }
}
