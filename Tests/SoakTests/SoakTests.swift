import Foundation
import Testing
import TestSupport

/// SPEC 12.3's soak, short: three minutes of steady churn on two workers with RETENTION_DAYS 0.0002 (17 s), the
/// pruner every 3 s and a PostgreSQL of its own whose autovacuum looks every 5 s (`SoakOptions.quick`); every Countdown table, Redis and the workers' memory must stay flat over the second half, and
/// nothing may be lost, duplicated or sent unasked. `scripts/soak --minutes 60` is the long run (docs/reliability.md).
/// A target of its own, so no other test's load runs beside it.
@Suite(.serialized) struct SoakTests {
    @Test func threeMinutesOfChurnStayFlat() async throws {
        let soak = try await Soak(.quick)
        var table = SoakTable.header
        let verdict: SoakVerdict
        do {
            verdict = try await soak.run { table += "\n" + SoakTable.row($0) }
        } catch {
            await soak.stop()
            throw error
        }
        let directory = soak.system.directory
        await soak.stop()
        let report = "\(table)\n\n\(SoakTable.summary(verdict))\n\n\(verdict.line)\n"
        try? report.write(toFile: (directory as NSString).appendingPathComponent("soak-report.md"), atomically: true, encoding: .utf8)
        print("soak (quick):\n\(report)")
        #expect(verdict.judged, "\(verdict.line)")
        #expect(verdict.flat, "\(verdict.line)")
        #expect(verdict.lost == 0 && verdict.duplicated == 0 && verdict.unexpected == 0, "\(verdict.line)")
        // The churn was real: streams were judged (their starts and reminders came) and the pruner deleted rows.
        #expect(soak.samples.reduce(0) { $0 + $1.starts } > 100, "starts were sent")
        #expect(soak.samples.reduce(0) { $0 + $1.pruned } > 0, "the pruner deleted rows")
    }
}
