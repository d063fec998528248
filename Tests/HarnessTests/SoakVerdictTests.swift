import Testing
import TestSupport

/// The soak's verdict: the last quarter's max against the max of the quarter before the half, 5 % plus a small step.
@Suite struct SoakVerdictTests {
    /// Twelve readings, 10 s apart, of a ledger whose rows (and bytes, a page per 10 rows) follow `rows`.
    static func samples(rows: (Int) -> Int, rss: (Int) -> Int = { _ in 40_000 }, lost: Int = 0, duplicated: Int = 0) -> [SoakSample] {
        (1...12).map { index in
            SoakSample(
                elapsed: Double(index * 10), tableRows: ["countdown_start_ledger": rows(index)],
                tableBytes: ["countdown_start_ledger": 8192 * (rows(index) / 10 + 1)], backendRows: ["streams": index * 10],
                redisBytes: 2_000_000, redisKeys: 40, workerRSSKB: [rss(index), 40_000], starts: 30, reminders: 20, startLatenessP99: 0.1,
                startLatenessMax: 0.2, reminderLatenessMax: 0.1, lost: index == 12 ? lost : 0, duplicated: index == 12 ? duplicated : 0,
                unexpected: 0, pruned: 100, streamsCreated: index * 10)
        }
    }

    @Test func aSawToothAfterTheWarmUpIsFlat() {
        // Fills up over the first quarter, then swings with the pruner between 900 and 1,000.
        let verdict = SoakVerdict.judge(Self.samples { $0 <= 3 ? $0 * 300 : ($0 % 2 == 0 ? 1000 : 900) })
        #expect(verdict.judged)
        #expect(verdict.flat, "\(verdict.line)")
        #expect(verdict.passed)
        #expect(verdict.line.hasPrefix("verdict: FLAT; lost 0, duplicated 0, unexpected 0: PASS"))
    }

    @Test func rowsGrowingThroughTheSecondHalfAreNotFlat() {
        // 100 rows more every reading: 600 at the half, 1,200 at the end.
        let verdict = SoakVerdict.judge(Self.samples { $0 * 100 })
        #expect(!verdict.flat)
        let grown = verdict.series.filter { !$0.flat }.map(\.name)
        #expect(grown.contains("countdown_start_ledger rows"))
        #expect(grown.contains("all tables rows"))
        #expect(verdict.line.contains("NOT FLAT (countdown_start_ledger rows 600 -> 1200"), "\(verdict.line)")
    }

    @Test func growthWithinFivePercentAndTheStepIsFlat() {
        // 10,000 rows at the half, 10,540 at the end: 5 % plus 40 rows.
        #expect(SoakVerdict.judge(Self.samples { $0 <= 6 ? 10_000 : 10_540 }).series.first { $0.name == "countdown_start_ledger rows" }?.flat == true)
        #expect(SoakVerdict.judge(Self.samples { $0 <= 6 ? 10_000 : 10_560 }).series.first { $0.name == "countdown_start_ledger rows" }?.flat == false)
    }

    @Test func workerMemoryGrowingIsNotFlat() {
        let verdict = SoakVerdict.judge(Self.samples(rows: { _ in 500 }, rss: { 40_000 + $0 * 2_000 }))
        #expect(verdict.series.filter { !$0.flat }.map(\.name) == ["worker 0 RSS"])
    }

    @Test func lostOrDuplicatedFailsAFlatRun() {
        let lost = SoakVerdict.judge(Self.samples(rows: { _ in 500 }, lost: 1))
        #expect(lost.flat && !lost.passed)
        let duplicated = SoakVerdict.judge(Self.samples(rows: { _ in 500 }, duplicated: 2))
        #expect(duplicated.flat && !duplicated.passed)
        #expect(duplicated.line.contains("duplicated 2"))
    }

    @Test func aRunTooShortForBothWindowsIsNotJudged() {
        let verdict = SoakVerdict.judge(Array(Self.samples { _ in 10 }.prefix(1)))
        #expect(!verdict.judged && !verdict.passed)
        #expect(verdict.line.hasPrefix("verdict: NOT JUDGED"))
    }
}
