import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// FCM answers 503 for 20 s (10 s quick) from 1 s before the due second, then recovers: lost 0, and the
    /// requests during the outage stay within what the queue's backoff allows.
    @Test("5. FCM 503 for 20 s, then recovery")
    func scenario05FCMUnavailable() async throws {
        try await ChaosScenario.run(number: 5, title: "FCM 503 for 20 s, then recovery", latencyMilliseconds: 30) { s in
            let outage = s.size(10, 20)
            _ = try await s.startWorkers(2)
            let due = try await s.seed(s.size(60, 300))
            try await s.waitUntil(due - 1)
            try await s.system.fault(["status": 503, "errorCode": "UNAVAILABLE", "forSeconds": outage])
            let began = Date().timeIntervalSince1970
            _ = try await s.waitQuiet(timeout: Double(outage + s.size(60, 90)))
            let during = try s.system.fakeRequestLog().filter { began <= $0.at && $0.at < began + Double(outage) }
            let rejected = during.count { $0.status == 503 }
            let attempts = ChaosScenario.maxAttemptsWithin(Double(outage))
            let bound = s.expected.count * attempts
            var perSecond: [Int: Int] = [:]
            for request in during { perSecond[Int(request.at - began), default: 0] += 1 }
            s.note("503 for \(outage)s from 1s before the due second: \(during.count) requests during the outage (\(rejected) answered 503); "
                   + "bound \(s.expected.count) pushes × \(attempts) attempts = \(bound)")
            s.note("requests per second of the outage: " + (0..<outage).map { String(perSecond[$0] ?? 0) }.joined(separator: " "))
            s.check(during.count <= bound, "requests during the outage ≤ backoff bound (\(during.count) ≤ \(bound))")
            s.check(rejected > 0, "the outage was hit")
            return nil
        }
    }
}
