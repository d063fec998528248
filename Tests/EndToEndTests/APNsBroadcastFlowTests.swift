import Foundation
import Postgres
import Testing
import TestSupport

/// `APNS_BROADCAST=on` end to end (SPEC 12.5): a real worker against the fake APNs creates one channel for the stream,
/// starts the iOS 18 device on it (`input-push-channel`) and the other by token, and ends the stream with one
/// broadcast on the channel beside the token end of the registered session.
@Suite(.serialized) struct APNsBroadcastFlowTests {
    @Test func aStreamEndsWithOneBroadcast() async throws {
        let apns = try await FakeAPNsProcess()
        let system = try await CountdownSystem(settings: apns.workerEnvironment.merging([
            "START_LEAD_SECONDS": "30", "REMINDER_TRANSPORT": "off", "APNS_BROADCAST": "on",
        ]) { $1 })
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
        #expect(broadcasts.count == 1, "one request for every activity on the channel")
        let end = try #require(broadcasts.first)
        #expect(end.channelID == channel && end.headers["apns-channel-id"] == channel)
        #expect(end.headers["apns-push-type"] == "liveactivity" && end.headers["apns-topic"] == nil)
        #expect(end.contentState["endedReason"] as? String == "cancelled")
        // SPEC 12.5 asks for 1 s; the bound here leaves room for a loaded test machine, the figure is printed.
        print("end broadcast accepted \(String(format: "%.3f", end.receivedAt - cancelledAt)) s after the status change")
        #expect(end.receivedAt - cancelledAt < 5)
        #expect(ended.filter { $0.kind == "device" && $0.event == "end" }.map(\.token) == [CountdownSystem.sessionToken("s1", "old-iphone")])
        let state = try await system.query("SELECT state FROM countdown_broadcast_channels WHERE stream_id = 's1'").first?.decode("state", as: String.self)
        #expect(state == "deleting", "deleted at APNs after the end's dismissal time")
        await system.stop()
        apns.stop()
    }

    /// The channel ids the fake APNs holds.
    static func channels(_ apns: FakeAPNsProcess) async throws -> [String] {
        let answer = try await apns.control.call("GET", "/fake/channels")
        let objects = try JSONSerialization.jsonObject(with: answer.body) as? [[String: Any]] ?? []
        return objects.compactMap { $0["id"] as? String }
    }
}
