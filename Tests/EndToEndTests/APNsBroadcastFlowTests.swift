import Foundation
import Postgres
import Testing
import TestSupport

/// `APNS_BROADCAST=on` end to end (SPEC 12.5): a real worker against the fake APNs creates one channel for the stream,
/// starts the iOS 18 device on it (`input-push-channel`) and the other by token, and ends the stream with one
/// broadcast on the channel beside the token end of the registered session.
@Suite(.serialized) struct APNsBroadcastFlowTests {
    @Test func aStreamEndsWithOneBroadcast() async throws {
        let (apns, system) = try await Self.broadcasting()
        try await system.user("creator", name: "Selin Kaya")
        try await system.device("new-iphone", user: "creator")
        try await system.device("old-iphone", user: "creator")
        try await system.execute("INSERT INTO countdown_device_os (device_id, os_version, major) VALUES ('new-iphone', '18.2', 18), ('old-iphone', '17.5', 17)")
        try system.startWorker()
        try await system.stream("s1", title: "Gece", startsIn: 20, creator: "creator")

        let started = try await apns.waitForPushes("both push-to-starts") { $0.filter { $0.event == "start" }.count == 2 }
        let channels = try await Self.channels(apns)
        #expect(channels.count == 1, "one channel for the stream: \(channels)")
        let channel = try #require(channels.first)
        let byToken = Dictionary(uniqueKeysWithValues: started.filter { $0.event == "start" }.map { ($0.token ?? "", $0) })
        #expect(byToken[CountdownSystem.pushToStartToken("new-iphone")]?.aps["input-push-channel"] as? String == channel)
        #expect(byToken[CountdownSystem.pushToStartToken("old-iphone")]?.aps["input-push-token"] as? Int == 1)

        // The old phone's activity registered its token; the new phone's is on the channel.
        try await system.session(stream: "s1", device: "old-iphone", user: "creator")
        let cancelledAt = Date().timeIntervalSince1970
        try await system.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's1'")
        let ended = try await apns.waitForPushes("the end broadcast and the token end") { pushes in
            pushes.contains { $0.kind == "broadcast" && $0.event == "end" } && pushes.contains { $0.kind == "device" && $0.event == "end" }
        }
        let broadcasts = ended.filter { $0.kind == "broadcast" }
        #expect(broadcasts.count == 1, "one request for every activity on the channel: \(broadcasts.map { "\($0.event) at \($0.receivedAt - cancelledAt)" })")
        let end = try #require(broadcasts.first)
        #expect(end.channelID == channel && end.headers["apns-channel-id"] == channel)
        #expect(end.headers["apns-push-type"] == "liveactivity" && end.headers["apns-topic"] == nil)
        #expect(end.contentState["endedReason"] as? String == "cancelled")
        // SPEC 12.5 asks for 1 s; the bound here leaves room for a loaded test machine, the figure is printed.
        print("end broadcast accepted \(String(format: "%.3f", end.receivedAt - cancelledAt)) s after the status change")
        #expect(end.receivedAt - cancelledAt < 5)
        #expect(ended.filter { $0.kind == "device" && $0.event == "end" }.map(\.token) == [CountdownSystem.sessionToken("s1", "old-iphone")])
        // The worker records the broadcast's outcome after the fake answered it: wait for the record.
        try await waitUntil(timeout: .seconds(15), "the channel marked for deletion at APNs after the end's dismissal time") {
            try await system.query("SELECT state FROM countdown_broadcast_channels WHERE stream_id = 's1'").first?.decode("state", as: String.self) == "deleting"
        }
        await system.stop()
        apns.stop()
    }

    /// A stream whose every activity is on its channel (no session registered a token): a move is one update broadcast
    /// and the cancel one end broadcast, with no token push at all.
    @Test func aStreamWithEveryActivityOnItsChannelMovesAndEndsByBroadcastOnly() async throws {
        let (apns, system) = try await Self.broadcasting()
        try await Self.twoIOS18Participants(system)
        // Due for its start (30 s before) a few seconds after it was written: the jobs its rows queue at once (a
        // backfill per participant) have run by then, so one start fan-out creates the channel and starts both on it.
        try await system.stream("s2", title: "Final", startsIn: 36, creator: "creator", guests: ["guest"])
        let started = try await apns.waitForPushes(timeout: .seconds(40), "both starts on the channel") { pushes in
            pushes.filter { $0.event == "start" && $0.aps["input-push-channel"] != nil }.count == 2
        }
        #expect(started.allSatisfy { $0.aps["input-push-token"] == nil }, "every activity is on the channel")
        let channel = try #require(try await Self.channels(apns).first)
        try await system.waitForIdle("the start to settle")
        let afterStart = try await apns.pushes().map(\.seq).max() ?? 0

        let moved = try await Self.pushes(after: afterStart, of: "UPDATE streams SET planned_start_at = planned_start_at + interval '10 minutes' WHERE id = 's2'",
                                          awaiting: "update", apns, system)
        #expect(moved.count == 1 && moved.first?.kind == "broadcast" && moved.first?.channelID == channel,
                "one update broadcast and no token push: \(moved.map { "\($0.kind) \($0.event)" })")
        let ended = try await Self.pushes(after: moved.map(\.seq).max() ?? afterStart, of: "UPDATE streams SET status = 'cancelled' WHERE id = 's2'",
                                          awaiting: "end", apns, system)
        #expect(ended.count == 1 && ended.first?.kind == "broadcast" && ended.first?.channelID == channel,
                "one end broadcast and no token push: \(ended.map { "\($0.kind) \($0.event)" })")
        #expect(ended.first?.contentState["endedReason"] as? String == "cancelled")
        await system.stop()
        apns.stop()
    }

    /// Apple slow to answer (every request waits 500 ms): the stream's start and each participant's backfill, due
    /// together, race for the channel; the ones that find it being created wait for it, so every iOS 18 start carries it.
    @Test func startsRacingASlowChannelCreationAllGoOnTheChannel() async throws {
        let (apns, system) = try await Self.broadcasting()
        try await apns.fault(["latencyMs": 500])
        try await Self.twoIOS18Participants(system)
        try await system.stream("s3", title: "Derbi", startsIn: 20, creator: "creator", guests: ["guest"])
        let started = try await apns.waitForPushes("both push-to-starts") { $0.filter { $0.event == "start" }.count == 2 }
        let channels = try await Self.channels(apns)
        #expect(channels.count == 1, "one channel for the stream: \(channels)")
        let channel = try #require(channels.first)
        #expect(started.filter { $0.event == "start" }.allSatisfy { $0.aps["input-push-channel"] as? String == channel },
                "\(started.map { "\($0.token ?? "-") \($0.aps)" })")
        await system.stop()
        apns.stop()
    }

    /// Runs `change`, waits for the `event` broadcast it causes and for the queue to be idle, and returns every push
    /// accepted after `seq`.
    static func pushes(after seq: Int, of change: String, awaiting event: String, _ apns: FakeAPNsProcess,
                       _ system: CountdownSystem) async throws -> [APNsPush] {
        try await system.execute(change)
        try await apns.waitForPushes("the \(event) broadcast") { $0.contains { $0.seq > seq && $0.kind == "broadcast" && $0.event == event } }
        try await system.waitForIdle("the \(event) job to finish")
        return try await apns.pushes().filter { $0.seq > seq }
    }

    /// The fake APNs and a system whose workers push through it with broadcast channels on.
    static func broadcasting() async throws -> (FakeAPNsProcess, CountdownSystem) {
        let apns = try await FakeAPNsProcess()
        let settings = apns.workerEnvironment.merging(["START_LEAD_SECONDS": "30", "REMINDER_TRANSPORT": "off", "APNS_BROADCAST": "on"]) { $1 }
        return (apns, try await CountdownSystem(settings: settings))
    }

    /// A creator and a guest, each with one iPhone that reported iOS 18, and a running worker.
    static func twoIOS18Participants(_ system: CountdownSystem) async throws {
        try await system.user("creator", name: "Selin Kaya")
        try await system.user("guest", name: "Mert Demir")
        try await system.device("creator-iphone", user: "creator")
        try await system.device("guest-iphone", user: "guest")
        try await system.execute("INSERT INTO countdown_device_os (device_id, os_version, major) VALUES ('creator-iphone', '18.2', 18), ('guest-iphone', '18.0', 18)")
        try system.startWorker()
    }

    /// The channel ids the fake APNs holds.
    static func channels(_ apns: FakeAPNsProcess) async throws -> [String] {
        let answer = try await apns.control.call("GET", "/fake/channels")
        let objects = try JSONSerialization.jsonObject(with: answer.body) as? [[String: Any]] ?? []
        return objects.compactMap { $0["id"] as? String }
    }
}
