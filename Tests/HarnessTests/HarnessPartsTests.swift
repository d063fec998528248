import Foundation
import Testing
import TestSupport

/// The whole-system harness' pure parts: comparing starts, percentiles, reading the fake's record file, metrics text.
@Suite struct HarnessPartsTests {
    private let a = StartKey(stream: "c1.1", token: "aa")
    private let b = StartKey(stream: "c1.2", token: "bb")
    private let c = StartKey(stream: "c1.3", token: "cc")
    private let d = StartKey(stream: "c1.4", token: "dd")

    /// Ports for servers come from below the kernel's ephemeral range: a port-0 bind of another test's server or an
    /// outgoing connection never takes one between the pick and the server's bind. Never one port twice.
    @Test func freePortsLieBelowTheEphemeralRangeAndAreNeverHandedOutTwice() throws {
        let range = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let ephemeralStart = try #require(range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) })
        let ports = (0..<200).map { _ in freeLoopbackPort() }
        #expect(ports.allSatisfy { $0 >= 10000 && $0 < ephemeralStart }, "\(ports.filter { $0 >= ephemeralStart })")
        #expect(Set(ports).count == ports.count)
    }

    @Test func compareCountsLostDuplicatedAndUnexpected() {
        let counts = StartComparison.compare([a, b, c], [a, a, b, d, d])
        #expect(counts == StartComparison(expected: 3, accepted: 5, lost: 1, duplicated: 2, unexpected: 2))
        #expect(StartComparison.compare([a, b], [b, a]) == StartComparison(expected: 2, accepted: 2, lost: 0, duplicated: 0, unexpected: 0))
        #expect(StartComparison.compare([], []) == StartComparison(expected: 0, accepted: 0, lost: 0, duplicated: 0, unexpected: 0))
    }

    @Test func startKeyTellsAndroidByTheFCMPrefix() {
        #expect(StartKey(stream: "s", token: "fcm-abc").isAndroid)
        #expect(!StartKey(stream: "s", token: "0a1b2c").isAndroid)
    }

    @Test func percentileIsNearestRank() {
        let values = (1...10).map(Double.init).shuffled()
        #expect(percentile(values, 0.5) == 5)
        #expect(percentile(values, 0.9) == 9)
        #expect(percentile(values, 0.95) == 10)
        #expect(percentile(values, 1) == 10)
        #expect(percentile(values, 0) == 1)
        #expect(percentile([7], 0.99) == 7)
        #expect(percentile([], 0.5).isNaN)
    }

    @Test func classifiesRecordLines() {
        let iosStart = #"{"event":"start","token":"fcm-d1","liveActivityToken":"ab12","receivedAt":1700000000.25,"seq":1,"#
            + #""message":{"token":"fcm-d1","apns":{"payload":{"aps":{"event":"start","attributes":{"streamId":"c1.7"}}}}}}"#
        #expect(PushTally.classify(Data(iosStart.utf8)) == .start(StartKey(stream: "c1.7", token: "ab12"), receivedAt: 1_700_000_000.25))

        let androidStart = #"{"event":"android_start","token":"fcm-x9","receivedAt":12.5,"message":{"data":{"streamId":"c20.3","type":"countdown"}}}"#
        #expect(PushTally.classify(Data(androidStart.utf8)) == .start(StartKey(stream: "c20.3", token: "fcm-x9"), receivedAt: 12.5))

        let reminder = #"{"event":"notification","token":"fcm-d2","receivedAt":3,"message":{"data":{"type":"stream_reminder","streamId":"s9"}}}"#
        #expect(PushTally.classify(Data(reminder.utf8)) == .reminder(stream: "s9", receivedAt: 3))

        let update = #"{"event":"update","token":"fcm-d1","receivedAt":4,"message":{"apns":{"payload":{"aps":{"event":"update"}}}}}"#
        #expect(PushTally.classify(Data(update.utf8)) == .other)
        #expect(PushTally.classify(Data("not json {".utf8)) == .other)
        #expect(PushTally.classify(Data("[1, 2]".utf8)) == .other)
        let startWithoutStream = #"{"event":"start","liveActivityToken":"ab","message":{"apns":{}}}"#
        #expect(PushTally.classify(Data(startWithoutStream.utf8)) == .other)
    }

    @Test func tallyReadsOnlyWhatWasAppendedAndWaitsForWholeLines() throws {
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent(TestEnvironment.uniqueName("tally") + ".jsonl")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tally = PushTally(recordPath: path)
        try tally.refresh()  // no file yet: nothing
        #expect(tally.starts.isEmpty && tally.other == 0)

        let start = { (stream: String, token: String) in
            #"{"event":"start","liveActivityToken":""# + token + #"","receivedAt":5,"message":{"apns":{"payload":{"aps":{"attributes":{"streamId":""#
                + stream + #""}}}}}}"#
        }
        let reminder = #"{"event":"notification","receivedAt":6,"message":{"data":{"type":"stream_reminder","streamId":"c1.1"}}}"#
        let first = start("c1.1", "t1") + "\n" + reminder + "\n" + start("c2.1", "t2")
        try Data(first.utf8).write(to: URL(fileURLWithPath: path))
        try tally.refresh()
        #expect(tally.startCount(prefix: "c1.") == 1, "the third line is not whole yet")
        #expect(tally.startCount(prefix: "c2.") == 0)
        #expect(tally.reminderCount(stream: "c1.1") == 1)

        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(("\n" + start("c1.1", "t1") + "\ngarbage\n").utf8))
        try handle.close()
        try tally.refresh()
        #expect(tally.startCount(prefix: "c1.") == 2)
        #expect(tally.startCount(prefix: "c2.") == 1)
        #expect(tally.startKeys(prefix: "c1.") == [StartKey(stream: "c1.1", token: "t1"), StartKey(stream: "c1.1", token: "t1")])
        #expect(tally.startTimes(prefix: "c2.") == [5])
        #expect(tally.other == 1)
        try tally.refresh()
        #expect(tally.starts.count == 3, "nothing is read twice")
    }

    @Test func parsesPrometheusText() {
        let text = """
            # HELP countdown_jobs_total Jobs.
            # TYPE countdown_jobs_total counter
            countdown_jobs_total{kind="start",outcome="ack"} 12
            countdown_queue_lag_seconds 0.25
            broken line
            """
        #expect(SystemWorker.parseMetrics(text) == [#"countdown_jobs_total{kind="start",outcome="ack"}"#: 12, "countdown_queue_lag_seconds": 0.25])
    }

    @Test func readsThisProcessUsage() throws {
        let usage = try #require(ProcessUsage.of(pid: getpid()))
        #expect(usage.residentKB > 0 && usage.peakResidentKB >= usage.residentKB)
        #expect(usage.cpuSeconds >= 0 && usage.contextSwitches > 0)
    }
}
