import Foundation
import Postgres
import TestSupport

extension ChaosScenario {
    /// SIGKILLs `victim` and returns the (stream, push-to-start token) pairs (FCM token for an Android countdown) it
    /// held claimed and not settled: its pushes in flight (or claimed for its current page), the only starts its
    /// death may repeat.
    public func killAndRecord(_ victim: SystemWorker) async throws -> Set<StartKey> {
        let owner = try await victim.workerID()
        victim.kill9()
        let rows = try await system.query("""
            SELECT l.stream_id, CASE WHEN d.platform = 'android' THEN d.fcm_token ELSE d.push_to_start_token END AS token
            FROM countdown_start_ledger l JOIN devices d ON d.device_id = l.device_id
            WHERE l.stream_id LIKE $1 AND l.status = 'sending' AND l.claimed_by = $2
            """, [prefix + "%", owner])
        return Set(try rows.map { StartKey(stream: try $0.decode("stream_id"), token: try $0.decode("token", as: String?.self) ?? "") })
    }

    /// Notes, per kill, the pushes in flight and the duplicates among them; the duplicate bound becomes their sum.
    @discardableResult
    public func reportKills(_ kills: [(at: Double, inFlight: Set<StartKey>)]) throws -> (inFlight: Int, duplicated: Int) {
        let copies = Dictionary(try acceptedKeys().map { ($0, 1) }, uniquingKeysWith: +)
        var totalInFlight = 0
        var totalDuplicated = 0
        for (index, kill) in kills.enumerated() {
            let duplicated = kill.inFlight.reduce(0) { $0 + max(0, (copies[$1] ?? 0) - 1) }
            totalInFlight += kill.inFlight.count
            totalDuplicated += duplicated
            note("kill \(index + 1) at \(Self.signed(kill.at - (due ?? kill.at), 1))s: \(kill.inFlight.count) pushes in flight, \(duplicated) duplicated")
        }
        duplicateBound = totalInFlight
        duplicateBoundText = "≤ \(totalInFlight) in flight"
        return (totalInFlight, totalDuplicated)
    }

    /// How often a worker kept start outcomes in memory because PostgreSQL refused to record them.
    public func outcomesKept() -> Int {
        workerLogLines("could not record start outcomes; keeping them to write again", retired: true).count
    }

    /// The queue's retry policy (DelayQueue.RetryPolicy defaults): backoff base × 2^(attempt−1), half of it jittered.
    static let backoffBaseSeconds = 2.0
    static let backoffJitter = 0.5

    /// How many attempts one job can make within `seconds` when every backoff is as short as jitter allows.
    public static func maxAttemptsWithin(_ seconds: Double) -> Int {
        var attempts = 1
        var at = 0.0
        while true {
            at += backoffBaseSeconds * pow(2, Double(attempts - 1)) * (1 - backoffJitter)
            if at >= seconds { return attempts }
            attempts += 1
        }
    }
}
