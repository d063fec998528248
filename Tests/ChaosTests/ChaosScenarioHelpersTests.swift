import Foundation
import Testing

/// ChaosScenario's pure helpers (no system).
@Suite struct ChaosScenarioHelpersTests {
    /// Backoffs of at least 1, 2, 4, 8, 16 s (2 s × 2^(n−1), half jittered away): attempts start at 0, 1, 3, 7, 15, 31 s.
    @Test func maxAttemptsWithinCountsTheShortestBackoffs() {
        #expect(ChaosScenario.maxAttemptsWithin(0.5) == 1)
        #expect(ChaosScenario.maxAttemptsWithin(6) == 3)
        #expect(ChaosScenario.maxAttemptsWithin(7) == 3)
        #expect(ChaosScenario.maxAttemptsWithin(10) == 4)
        #expect(ChaosScenario.maxAttemptsWithin(20) == 5)
    }

    @Test func logTimeReadsTheLogsTimestamps() {
        #expect(abs(ChaosScenario.logTime(["ts": "2026-01-02T03:04:05.678Z"]) - 1_767_323_045.678) < 0.0005)
        #expect(ChaosScenario.logTime(["ts": "2026-01-02T03:04:05Z"]) == 1_767_323_045)
        #expect(ChaosScenario.logTime(["msg": "no time"]) == 0)
    }

    @Test func numbersAreFormattedAsTheReportShowsThem() {
        #expect(ChaosScenario.signed(1.26, 1) == "+1.3")
        #expect(ChaosScenario.signed(-0.5, 2) == "-0.50")
        #expect(ChaosScenario.fixed(3, 1) == "3.0")
        #expect(ChaosScenario.integer(NSNumber(value: 7)) == 7)
        #expect(ChaosScenario.integer(7) == 7)
        #expect(ChaosScenario.integer(nil) == 0)
    }
}
