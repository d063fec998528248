@testable import countdown_bench
import Foundation
import Testing

@Suite struct SystemBenchSnapshotTests {
    @Test func readsPushOutcomesFromMetricKeys() {
        #expect(SystemBenchSnapshot.pushOutcome(#"countdown_pushes_total{kind="start",result="retry",reason="unavailable"}"#) == "retry/unavailable")
        #expect(SystemBenchSnapshot.pushOutcome(#"countdown_pushes_total{result="accepted"}"#) == "accepted/")
        #expect(SystemBenchSnapshot.pushOutcome(#"countdown_jobs_total{result="done"}"#) == nil)
        #expect(SystemBenchSnapshot.metricLabels(#"m{a="1",b="x y"}"#) == ["a": "1", "b": "x y"])
    }

    @Test func readsCommandStatsAndTheCommandsThatTookMostTime() {
        let before = SystemBenchSnapshot.commandStats("# Commandstats\r\ncmdstat_get:calls=10,usec=100,usec_per_call=10.00\r\ncmdstat_evalsha:calls=5,usec=500000\r\n")
        #expect(before["get"]! == (10, 100) && before["evalsha"]! == (5, 500_000))
        let after = SystemBenchSnapshot.commandStats(
            "cmdstat_get:calls=20,usec=200\ncmdstat_evalsha:calls=2005,usec=1310000\ncmdstat_zadd:calls=100,usec=50000\ncmdstat_ping:calls=1,usec=0\n")
        let spent = SystemBenchSnapshot.commandSeconds(before, after, limit: 2)
        #expect(spent == [.init(name: "evalsha", calls: 2000, seconds: 0.81), .init(name: "zadd", calls: 100, seconds: 0.05)])
    }

    @Test func countsTheWarningsWrittenSinceAnOffset() throws {
        let path = NSTemporaryDirectory() + "bench-warnings-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(#"{"level":"warn","msg":"old"}"#.utf8 + [10]).write(to: URL(fileURLWithPath: path))
        let offset = SystemBenchSnapshot.fileSize(path)
        let lines = [#"{"level":"info","msg":"fine"}"#, #"{"level":"error","msg":"b"}"#, "not json", #"{"level":"warn","msg":"a"}"#,
                     #"{"level":"warn","msg":"a"}"#, #"{"level":"warn"}"#]
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(lines.joined(separator: "\n").utf8))
        try handle.close()
        #expect(SystemBenchSnapshot.warnings(since: [(path, offset)])
            == [.init(name: "warn: a", count: 2), .init(name: "error: b", count: 1), .init(name: "warn: ?", count: 1)])
    }
}
