import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// FCM answers 429 with `Retry-After: 5` for 20 s (6 s quick): no request for throttled work comes before 5 s
    /// have passed; lost 0.
    @Test("6. FCM 429 with Retry-After: 5")
    func scenario06FCMQuota() async throws {
        try await ChaosScenario.run(number: 6, title: "FCM 429 with Retry-After: 5", latencyMilliseconds: 30) { s in
            let window = s.size(6, 20)
            _ = try await s.startWorkers(2)
            let due = try await s.seed(s.size(40, 200))
            try await s.waitUntil(due - 1)
            try await s.system.fault(["status": 429, "errorCode": "QUOTA_EXCEEDED", "retryAfter": 5, "forSeconds": window])
            _ = try await s.waitQuiet(timeout: Double(window + s.size(40, 60)))
            let byToken = Dictionary(grouping: try s.system.fakeRequestLog(), by: \.token)
            var throttled = 0, early = 0
            var gaps: [Double] = []
            for requests in byToken.values {
                let ordered = requests.sorted { $0.at < $1.at }
                for (first, then) in zip(ordered, ordered.dropFirst()) where first.status == 429 {
                    gaps.append(then.at - first.at)
                    if then.at - first.at < 5 - 0.01 { early += 1 }
                }
                throttled += ordered.count { $0.status == 429 }
            }
            if let shortest = gaps.min() {
                s.note("429 (Retry-After: 5) for \(window)s: \(throttled) answered 429; shortest wait before the same token came again "
                       + ChaosScenario.fixed(shortest, 2) + "s")
            } else {
                s.note("429 for \(window)s: \(throttled) answered 429")
            }
            s.check(throttled > 0, "the quota was hit")
            s.check(early == 0, "no request for throttled work before 5s (\(early) early)")
            return nil
        }
    }
}
