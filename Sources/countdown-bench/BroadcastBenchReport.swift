import Foundation

/// What `countdown-bench broadcast` measured for one stream's end with `APNS_BROADCAST=on`, and its report.
struct BroadcastBenchResult: Codable, Equatable {
    /// Activities on the stream's channel (iOS 18 devices whose start went on it, as ledger rows).
    var subscribers: Int
    /// Broadcast requests the fake APNs accepted for the end.
    var broadcastRequests: Int
    /// Token pushes the fake APNs accepted for the end (none: every activity is on the channel).
    var tokenRequests: Int
    /// From the status change to the fake's acceptance of the end broadcast; nil when none came.
    var acceptedAfterSeconds: Double?
    /// The 1-minute load average when the stream ended.
    var loadAverage: Double
}

/// The report of `countdown-bench broadcast`: the figures and the target line (SPEC 12.5: the end of a stream is one
/// request, accepted within 1 s of the status change, however many activities are subscribed).
enum BroadcastBenchReport {
    static let targetSeconds = 1.0

    /// One broadcast, no token push, accepted within the target.
    static func met(_ result: BroadcastBenchResult) -> Bool {
        guard let seconds = result.acceptedAfterSeconds else { return false }
        return result.broadcastRequests == 1 && result.tokenRequests == 0 && seconds <= targetSeconds
    }

    static func text(_ result: BroadcastBenchResult) -> String {
        let accepted = result.acceptedAfterSeconds.map { String(format: "%.3f s", $0) } ?? "never"
        let requests = result.broadcastRequests + result.tokenRequests
        return """
            broadcast end: \(result.subscribers) activities on the stream's channel (load \(String(format: "%.1f", result.loadAverage)))
              requests for the end: \(requests) (\(result.broadcastRequests) broadcast, \(result.tokenRequests) token)
              end broadcast accepted \(accepted) after the status change
            targets:
              \(met(result) ? "PASS" : "MISS")  one request, accepted within \(String(format: "%.0f", targetSeconds)) s of the status change: \
            \(requests) request\(requests == 1 ? "" : "s"), \(accepted)

            """
    }
}
