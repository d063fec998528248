@testable import countdown_bench
import Testing

/// `countdown-bench broadcast`'s report: the end's requests and time, and the target (one request within 1 s).
@Suite struct BroadcastBenchReportTests {
    static func result(broadcasts: Int = 1, tokens: Int = 0, seconds: Double? = 0.226) -> BroadcastBenchResult {
        BroadcastBenchResult(subscribers: 100_001, broadcastRequests: broadcasts, tokenRequests: tokens, acceptedAfterSeconds: seconds, loadAverage: 2.5)
    }

    @Test func oneBroadcastWithinASecondPasses() {
        #expect(BroadcastBenchReport.text(Self.result()) == """
            broadcast end: 100001 activities on the stream's channel (load 2.5)
              requests for the end: 1 (1 broadcast, 0 token)
              end broadcast accepted 0.226 s after the status change
            targets:
              PASS  one request, accepted within 1 s of the status change: 1 request, 0.226 s

            """)
    }

    @Test func aSlowEndATokenPushOrNoBroadcastMisses() {
        #expect(!BroadcastBenchReport.met(Self.result(seconds: 1.001)))
        #expect(BroadcastBenchReport.met(Self.result(seconds: 1.0)))
        #expect(!BroadcastBenchReport.met(Self.result(tokens: 1)))
        #expect(!BroadcastBenchReport.met(Self.result(broadcasts: 2)))
        let never = BroadcastBenchReport.text(Self.result(broadcasts: 0, seconds: nil))
        #expect(never.contains("MISS  one request, accepted within 1 s of the status change: 0 requests, never"))
    }
}
